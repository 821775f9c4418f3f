### 语法层的拒绝：命令的参数无法按它的声明读取时的回复（core/src/grammar/error.rs、
### said.rs），所有游戏和大厅共用。反引号中的文字是要输入的内容。下面的短语是各命令
### 声明中英文短语的中文说法（core/src/grammar/said.rs 的 PHRASES）。

## 哪里不对
grammar-missing = `{ $command }` 需要{ $needs }：{ $hint }
grammar-missing-clause = `{ $command }` 需要{ $needs }（{ $clause }）：{ $hint }
grammar-extra = `{ $command }` 只接受{ $needs }，但多出了 `{ $extra }`：{ $hint }
grammar-extra-nothing = `{ $command }` 后面不接任何内容，但多出了 `{ $extra }`：{ $hint }
grammar-extra-lobby = `{ $command }` 后面不能接 `{ $extra }`：请输入 `{ $usage }`。
grammar-bad-number = `{ $command }`：{ $what } { $error }：{ $hint }
grammar-not-one = `{ $command }`：`{ $word }` 不是{ $noun }；{ $list }：{ $hint }
grammar-not-one-guess = `{ $command }`：`{ $word }` 不是{ $noun }（你是想输入 `{ $guess }` 吗？）；{ $list }：{ $hint }
grammar-expected = `{ $command }` 需要{ $needs }，而不是 `{ $word }`：{ $hint }
grammar-not-a-number = `{ $word }` 不是整数
grammar-negative = `{ $word }` 是负数；数量须为 0 或更大
grammar-too-large = `{ $word }` 太大（最多 { $max }）

## 要输入什么
grammar-type = 请输入 `{ $usage }`。
grammar-type-just = 直接输入 `{ $usage }` 即可。
grammar-type-example = 请输入 `{ $usage }`，例如 `{ $example }`。

## 命令需要什么
grammar-needs-nothing = 后面不接任何内容
grammar-needs-tokens = 至少一个标记
grammar-needs-mana-thaum = 法力数量和一种魔素
grammar-needs-amount-thaum = 数量和一种魔素
grammar-needs-mana-two-thaums = 法力数量和两种不同的魔素
grammar-needs-mana-defender = 法力数量和一名防守的玩家（可以是你自己）
grammar-needs-mana-player = 法力数量和另一名玩家
grammar-needs-at-most-one-player = 至多一名玩家
grammar-needs-next = {" "}`下一` 这个词
grammar-needs-adjustment = 一个数：`n` 设为该值，`+n` 增加，`-n` 减少
grammar-needs-player-adjustment = 一名玩家和一个数：`n` 设为该值，`+n` 发放，`-n` 收回
grammar-needs-one-player = 一名玩家
grammar-needs-gm = {" "}`添加 <玩家>`、`移除 <玩家>` 或 `列表`
grammar-needs-at-most-command = 至多一个命令
grammar-needs-game = 一个游戏
grammar-needs-challenged = 你要挑战的玩家
grammar-needs-at-most-wizard = 至多一名魔法师
grammar-needs-at-most-code = 至多一个绑定码
grammar-needs-at-most-player = 至多一名玩家
grammar-needs-player = 一名玩家
grammar-needs-at-most-game = 至多一个游戏
grammar-needs-at-most-language = 至多一种语言

## 缺少哪个参数
grammar-missing-mana = 缺少法力数量
grammar-missing-player = 缺少玩家
grammar-missing-number = 缺少数值
grammar-missing-thaum = 缺少魔素
grammar-missing-amount = 缺少数量
grammar-missing-both-thaums = 缺少两种魔素
grammar-missing-second-thaum = 缺少第二种魔素

## 读不懂的数字是什么
grammar-what-mana = 法力数量
grammar-what-amount = 数量
grammar-what-number = 数值

## 选项
grammar-noun-thaum = 魔素
grammar-list-thaums = 魔素有 火、水、土、风

## 用法中的参数
grammar-shown-tokens = <标记> [<标记> …]
grammar-shown-mana = <法力>
grammar-shown-player = <玩家>
grammar-shown-adjustment = <n|+n|-n>
grammar-shown-thaums = <火|水|土|风>
grammar-shown-amount = <数量>
grammar-shown-thaum = <魔素>
grammar-shown-other-thaum = <另一种魔素>
grammar-shown-player-or-table = [玩家|全桌]
grammar-shown-next = 下一
grammar-shown-gm = [列表 | 添加 <玩家> | 移除 <玩家>]
grammar-shown-command = [命令]
grammar-shown-game = <游戏>
grammar-shown-wizard = [魔法师]
grammar-shown-code = [绑定码]
grammar-shown-optional-player = [玩家]
grammar-shown-at-most-game = [游戏]
grammar-shown-language = [en|zh]

## 示例（不含前缀）
grammar-example-cast = 施法 迸发 火 风 协调
grammar-example-status = 状态
grammar-example-concede = 认输
grammar-example-stop = 停止
grammar-example-join = 加入
grammar-example-gather = 聚能 2 火
grammar-example-blood = 血魔法 3 水
grammar-example-alchemy = 炼金 1 火 风
grammar-example-bend = 扭曲 1 bob
grammar-example-summon = 召唤 0 bob
grammar-example-tornado = 龙卷 2 bob
grammar-example-status-player = 状态 bob
grammar-example-phase = 阶段 下一
grammar-example-instability = 不稳定 +1
grammar-example-coins = 金币 bob +5
grammar-example-add = 添加 bob
grammar-example-gm = 主持 添加 bob

## `!规则`
grammar-needs-at-most-rule = 至多一个规则编号
grammar-shown-rule = [编号]
