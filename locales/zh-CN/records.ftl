### `!战绩` 与 `!排行`：玩家的战绩和排行榜（daemon/src/router/records.rs）。
### 消息 id 以文件名开头。

## `!战绩 [玩家]`
records-nobody = 我不认识叫 `{ $name }` 的人。请用对方在这里用过的名字输入 `!战绩 <玩家>`，或输入 `!排行` 查看最好的玩家。
records-no-games = { $player } 还没有下完过一局。开局方式：{ $ways }。
records-played = { $player } 共玩了 { $games } 局，赢了 { $wins } 局。{ $duel }{ $thaum }{ $unrated }
records-duel = 决斗：等级分 { $rating } ± { $deviation }，共 { $duels } 场（{ $won } 胜 { $lost } 负{ $drawn }）；最常用的魔法师 { $wizard }；最长连胜 { $streak } 场。
records-drawn = {" "}{ $draws } 平
# 不计入 `!排行` 的对局（daemon/src/ratings/unrated.rs）。
records-unrated = 不评分：{ $unrated } 局（对手是访客或一分钟内认输的决斗、只有一人或靠游戏主持人给的金币赢下的魔素赛季），不计入 `!排行`。
records-thaum = 魔素：参加 { $seasons } 个赛季，赢了 { $won } 个{ $best }。
# `place` 是英文序数（1st）；中文用数字 `rank`。
records-best = ；最好名次第 { $rank } 名（共 { $of } 人，第 { $table } 桌第 { $season } 赛季）

## `!排行 [决斗|魔素]`
records-top-duel-none = 还没有人有决斗等级分：决斗结束时才会给玩家评分。用 `!决斗 <玩家>` 挑战别人。
records-top-duel = 决斗等级分（Glicko-2，共 { $rated } 人）：{ $entries }。
records-top-duel-entry = { $place }. { $player } { $rating } ± { $deviation }（{ $won } 胜 { $lost } 负{ $drawn }）
records-top-drawn = {" "}{ $draws } 平
records-top-duel-few = 还没有玩家打满 { $min } 场评分决斗：满了才会上 `!排行`。`!战绩` 可以查看每个人的战绩。
records-top-thaum-none = 还没有结束的魔素赛季。用 `!开局 魔素` 开一张桌子。
records-top-thaum-few = 还没有玩家打满 { $min } 个评分魔素赛季：满了才会上 `!排行 魔素`。`!战绩` 可以查看每个人的战绩。
records-top-thaum = 魔素排名（已结束的赛季共 { $seasons } 个；先比金币，再比魔素）：{ $entries }。
records-top-thaum-entry = { $place }. { $player } { $coins } 枚金币，魔素 { $thaums }（{ $seasons } 个赛季）
records-top-separator = {"；"}
