### `!战绩` 与 `!排行`：玩家的战绩和排行榜（daemon/src/router/records.rs）。
### 消息 id 以文件名开头。

## `!战绩 [玩家]`
records-nobody = 我不认识叫 `{ $name }` 的人。请用对方在这里用过的名字输入 `!战绩 <玩家>`，或输入 `!排行` 查看最好的玩家。
records-no-games = { $player } 还没有下完过一局。开局方式：{ $ways }。
records-played = { $player } 共玩了 { $games } 局，赢了 { $wins } 局。{ $pools }{ $unrated }
records-drawn = {" "}{ $draws } 平
# 不计入 `!排行` 的对局（daemon/src/ratings/unrated.rs）。
records-unrated = 不评分：{ $unrated } 局（对手是访客或一分钟内认输的决斗、只有一人或靠游戏主持人给的金币赢下的魔素赛季），不计入 `!排行`。
# 不自带战绩用语的游戏（其插件的 `record_words`）的战绩：`game` 是游戏名。对战类（Glicko-2 评分）：
records-challenge = { $game }：等级分 { $rating } ± { $deviation }，共 { $games } 局（{ $won } 胜 { $lost } 负{ $drawn }）{ $favourite }；最长连胜 { $streak } 局。
records-favourite = {"；"}最常选 { $choice }
# 开放桌类（按名次排名的轮次）：
records-open = { $game }：参加 { $rounds } 轮，赢了 { $won } 轮{ $best }。
# `place` 是英文序数（1st）；中文用数字 `rank`。
records-open-best = ；最好名次第 { $rank } 名（共 { $of } 人，第 { $table } 桌第 { $round } 轮）

## `!排行 [游戏]`
records-top-challenge-none = 还没有人有{ $game }等级分：{ $game }的对局结束时才会给玩家评分。
records-top-challenge = { $game }等级分（Glicko-2，共 { $rated } 人）：{ $entries }。
records-top-challenge-entry = { $place }. { $player } { $rating } ± { $deviation }（{ $won } 胜 { $lost } 负{ $drawn }）
records-top-challenge-few = 还没有玩家打满 { $min } 局评分{ $game }：满了才会上 `!排行 { $word }`。`!战绩` 可以查看每个人的战绩。
records-top-open-none = 还没有结束的{ $game }轮次。用 `!开局 { $word }` 开一张桌子。
records-top-open-few = 还没有玩家打满 { $min } 轮评分{ $game }：满了才会上 `!排行 { $word }`。`!战绩` 可以查看每个人的战绩。
records-top-open = { $game }排名（已结束的轮次共 { $rated } 个；先比得分，再比次要得分）：{ $entries }。
records-top-open-entry = { $place }. { $player } { $score } 分，次要得分 { $tiebreak }（{ $rounds } 轮）
records-top-drawn = {" "}{ $draws } 平
records-top-unknown = `!排行`：`{ $word }` 不是排行榜；排行榜有 { $games }：例如输入 `!排行 { $first }`。
records-top-separator = {"；"}

## 网站排行榜：游戏表格的标题。
records-board-challenge = { $game }（Glicko-2）
records-board-open = { $game }
