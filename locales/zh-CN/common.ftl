### 各部分共用的词，以及目录自身的测试（core/src/locale.rs）。
### 变量写作 `{ $name }`；反引号中的文字显示为代码。消息 id 以文件名开头。

# 列举：“alice 和 bob”，“alice、bob 和 carol”。
common-and = { $first } 和 { $last }
common-comma = { $first }、{ $rest }
common-or = { $first } 或 { $last }

# 目录自身的测试。
common-test-positions = { $count } 个位置
common-test-rich = { $player } 输入了 `{ $word }`。
