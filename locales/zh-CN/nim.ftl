### 取石子（core/src/games/nim/RULES.md）：公告、拒绝理由、帮助和规则。

## 词
nim-name = 取石子
nim-summary = 两位玩家轮流从三堆石子中的一堆取走 1 到 3 颗；取走最后一颗石子的人获胜
nim-pile-a = 甲
nim-pile-b = 乙
nim-pile-c = 丙
nim-piles = 甲 { $a } · 乙 { $b } · 丙 { $c }

## 发生的事
nim-opened = 🪨 { $player } 开了一局取石子：石子堆 { $piles }。有人输入 `!加入` 即可对局；之后轮流用 `!取 <数量> <堆>` 从一堆中取 1 到 3 颗；取走最后一颗石子的人获胜（规则 N-4）。
nim-joined = { $player } 加入了。{ $first } 先手，例如 `!取 2 乙`。石子堆：{ $piles }。
nim-took = { $player } 从{ $pile }堆取走 { $amount } 颗石子。石子堆：{ $piles }。轮到 { $next }。
nim-took-last = { $player } 从{ $pile }堆取走 { $amount } 颗石子。石子堆：{ $piles }。
nim-won = 🏁 { $player } 取走了最后一颗石子，获胜；{ $loser } 落败（规则 N-4）。用 `!开局 取石子` 再来一局。
nim-status = 取石子：{ $first } 对 { $second }。石子堆：{ $piles }。轮到 { $next }。
nim-status-waiting = 取石子：{ $player } 在等对手 `!加入`。石子堆：{ $piles }。
nim-conceded = 🏳 { $player } 认输；{ $winner } 获胜。用 `!开局 取石子` 再来一局。
nim-closed = 还没有人加入，{ $player } 就关了这一桌；没有胜者。
nim-stopped = 🛑 { $player } 中止了这一局；没有胜者。用 `!开局 取石子` 再来一局。

## 拒绝理由
nim-over = 这一局取石子已经结束。用 `!开局 取石子` 再来一局。
nim-already-seated = 你已经在这一桌了；请等对手 `!加入`。
nim-seats-taken = 两个座位都有人了（{ $first } 和 { $second }）；可以观战，或者到别的房间用 `!开局 取石子` 开一桌。
nim-not-seated-yet = 你不在这一桌对局；输入 `!加入` 坐上第二个座位。
nim-not-seated = 你不在这一桌对局：对局的是 { $first } 和 { $second }。可以观战，或者到别的房间用 `!开局 取石子` 开一桌。
nim-no-opponent = 请等对手 `!加入` 之后再取石子。
nim-not-your-turn = 现在轮到 { $player }；请等对方走完。
nim-amount = 每次只能取 1 到 { $most } 颗石子，不能取 { $amount } 颗（规则 N-3）：例如 `!取 2 乙`。
nim-pile-empty = { $pile }堆已经空了；请从还有石子的堆里取：{ $piles }。
nim-pile-short = { $pile }堆只剩 { $left } 颗石子；最多取这么多，例如 `!取 { $left } { $pile }`。
nim-may-not-stop = 只有房间管理员、游戏主持人或机器人管理员可以中止这一局；想认输请输入 `!认输`。

## 帮助
nim-help-join = 坐上这一桌取石子的第二个座位；开局的人先手（规则 N-1）。
nim-help-take = 轮到你时：从甲、乙、丙中的一堆取走 1 到 3 颗石子（`!取 2 乙`）；取走最后一颗石子的人获胜（规则 N-3、N-4）。
nim-help-status = 显示各堆石子和轮到谁。
nim-help-concede = 认输：对手获胜。
nim-help-stop = 房间管理员、游戏主持人和机器人管理员：中止这一局，没有胜者（玩家想退出请用 `!认输`）。

## 语法用语（command::PHRASES）
nim-phrase-needs-amount-pile = 数量和一堆石子
nim-phrase-missing-pile = 缺少石子堆
nim-phrase-noun-pile = 石子堆
nim-phrase-list-piles = 石子堆有 甲、乙、丙
nim-phrase-shown-piles = <甲|乙|丙>
nim-phrase-example-take = 取 2 乙

## 随手规则
nim-rule-n1 = 两人对局：用 `!开局 取石子` 开桌的人，和第一个 `!加入` 的人。开局的人先手，之后轮流。
nim-rule-n2 = 共有三堆石子，叫作甲、乙、丙，分别有 3、5、7 颗。
nim-rule-n3 = 轮到你时，从一堆中取走 1、2 或 3 颗石子（那一堆须有这么多）。
nim-rule-n4 = 取走最后一颗石子的人获胜。
nim-rule-n5 = 玩家可以认输（对方获胜）；房间管理员、游戏主持人或机器人管理员可以中止这一局（没有胜者）。

## 局面图和网站上的概况
nim-board-to-move = 轮到 { $player }
nim-board-waiting = { $player } 在等对手
nim-board-won = { $player } 取走了最后一颗石子，获胜
nim-board-over = 这一局已结束，没有胜者
nim-board-caption = 取石子第 { $table } 桌：甲堆 { $a }、乙堆 { $b }、丙堆 { $c }；{ $standing }。
nim-board-caption-unread = 取石子第 { $table } 桌。
nim-piles-plain = 甲 { $a } · 乙 { $b } · 丙 { $c }
nim-fact-players = 玩家
nim-fact-piles = 石子堆
nim-fact-standing = 现在
