### 决斗（RULES 第二个游戏）：公告、私信、拒绝理由。
### 术语以原作（seeds/002）为准，见 locales/GLOSSARY.md。
### `{" "}` 保留 Fluent 会去掉的首尾空格。

-token-list = `迸发` `专注` `超速` `反制`（元素预调理），`水` `火` `雷` `风` `土` `虚无`（元素），`协调`（协调元素波动）；也可写全称（`魔力迸发`）或英文（`surge` `fire` `end`）

## 词
duel-element-water = 水
duel-element-fire = 火
duel-element-thunder = 雷
duel-element-wind = 风
duel-element-earth = 土
duel-element-void = 虚无
duel-token-surge = 魔力迸发
duel-token-focus = 专注施法
duel-token-overspeed = 超速魔法
duel-token-counter = 完全反制
duel-token-end = 协调元素波动
duel-nothing = 无
duel-minutes = { $minutes } 分钟
duel-seconds = { $seconds } 秒
duel-track-even = 持平 0
duel-track-toward = 偏向 { $player } { $points } 点
duel-seal = { $player } 的前 { $positions } 个元素位置不能唤起 { $elements }
duel-seals-more = { $first }；{ $rest }
duel-seals = { $seals }。

## 开局与施法的每一步
duel-opened = ⚔ 决斗！{ $first }（{ $first-wizard }）对 { $second }（{ $second-wizard }）。胜利点数条从 0 开始，推到你这边 30 点即获胜（规则 D-1）。第 1 回合开始：{ $whisper ->
    [msg] 请私信把法术发给我，例如 `/msg { $bot } !施法 迸发 火 风 协调`
    [direct] 请在我们的私聊中把法术发给我（我已在那里给你们每人发了消息），例如 `!施法 迸发 火 风 协调`
   *[privately] 请私信把法术发给我，例如 `!施法 迸发 火 风 协调`
}——标记每步放置一个，双方同时揭示；每步最多等待 { $wait }。`!帮助 施法` 列出所有标记，`!状态` 查看决斗状况。
duel-opened-private = ⚔ 你对 { $opponent } 的决斗开始了；你的魔法师是 { $wizard }。请在这里发送你的法术，例如 `!施法 迸发 火 风 协调`：双方法术逐步揭示之前，别人看不到它。`!帮助 施法` 列出所有标记。
duel-queued-complete = 已记下。你第 { $round } 回合的法术：{ $tokens }。你的标记每步放置一个，与对手的标记同时揭示。
duel-queued-open = 已记下。你第 { $round } 回合的法术：{ $tokens }。可用 `!施法 …` 继续添加，以 `协调` 结束。
duel-queue = 你排队中的标记（只有你能看到）：{ $tokens }。
duel-step = 第 { $round } 回合第 { $step } 步：{ $placed }
duel-steps = 第 { $round } 回合第 { $first }–{ $last } 步：{ $placed }
duel-spell-complete = （法术已完成）
duel-timed-out = （超时，规则 D-9）
duel-check-passed = （专注判定：掷出 { $roll }，需要 { $need }+ ✓）
duel-check-failed = （专注判定：掷出 { $roll }，需要 { $need }+ ✗——该元素被丢弃但仍然消耗，法术被打断）
duel-dropped-interrupted = 你的专注判定失败，法术被打断；这些排队中的标记被丢弃：{ $tokens }。
duel-dropped-timed-out = 这一步超时了；这些排队中的标记被丢弃：{ $tokens }。

## 结算
duel-settles = 第 { $round } 回合结算。
duel-spell-line = { $player }：{ $tokens }{ $interrupted } → { $outcome }。
duel-interrupted = （被打断）
duel-outcome-countered = 被 { $opponent } 的完全反制反制：视为没有释放法术，威力 0（规则 D-7）
duel-counter-succeeds = 完全反制成功（规则 D-7）；
duel-counter-fails-level = 完全反制失败：{ $counter } 级低于 { $opponent } 的 { $target } 级（规则 D-7）；
duel-counter-fails-opposite = 完全反制失败：第 { $position } 个位置上的 { $mine } 与 { $opponent } 的 { $theirs } 性质并不相反（规则 D-6）；
duel-counter-fails-missing = 完全反制失败：第 { $position } 个位置上没有元素与 { $opponent } 的 { $theirs } 相对（规则 D-6）；
duel-removal-element = 第 { $position } 位的 { $element }
duel-removal-position = 第 { $position } 位的元素
duel-removals = { $remover } 的虚无移除了 { $owner } 的 { $removed }（规则 D-11）；
duel-outcome-level = { $level } 级：基础威力 { $base }
duel-outcome-doubled = {" "}×2（同级的完全反制）
duel-outcome-surge = {" "}+ 魔力迸发 { $boost }
duel-outcome-explosion = {" "}+ 元素爆炸 { $explosion }
duel-outcome-favour = {" "}+ 擅长 { $favour }
duel-outcome-power = {" "}= 威力 { $power }
duel-outcome-attribute = ；属性 { $elements }
duel-track-moves = 胜利点数条向 { $player } 移动 { $points } 点（{ $first } { $first-power } − { $second } { $second-power }）；现在{ $track }
duel-track-still = 胜利点数条不动（{ $first } { $first-power } − { $second } { $second-power }）；现在{ $track }
duel-track-line = { $moves }。{ $seals }
duel-seals-next = 下回合的元素封印（规则 D-10）：{ $seals }
duel-no-seals-next = 下回合没有元素封印。
duel-compact-spell = { $player }{ $interrupted } → { $outcome }
duel-compact-settles = 第 { $round } 回合结算：{ $spells }。{ $moves }。

## 下一回合
# 截止时间（UTC）。
duel-when = { $date } { $time } UTC
duel-round-begins = 第 { $round } 回合开始：{ $first }、{ $second }，{ $whisper ->
    [msg] 请用 `/msg { $bot } !施法 …` 发送法术
    [direct] 请在我们的私聊中发送法术（`!施法 …`）
   *[privately] 请私信把法术发给我（`!施法 …`）
}；每步最多等待 { $wait }。
duel-round-begins-compact = 第 { $round } 回合开始：{ $whisper ->
    [msg] 请用 `/msg { $bot } !施法 …` 发送法术
    [direct] 请在我们的私聊中发送法术（`!施法 …`）
   *[privately] 请私信把法术发给我（`!施法 …`）
}；每步最多等待 { $wait }。{ $seals }
duel-round-seals = 元素封印（规则 D-10）：{ $seals }

## 结束
duel-over = 🏁 决斗结束：{ $reason }。{ $result }用 `!决斗 <玩家> [魔法师]` 再来一局。
duel-over-track = 胜利点数条到达{ $track }（规则 D-1）
duel-over-pool = { $player } 的元素池干涸了（规则 D-2）；胜利点数条为{ $track }
duel-over-pools = { $first } 和 { $second } 的元素池都干涸了（规则 D-2）；胜利点数条为{ $track }
duel-over-conceded = { $player } 认输
duel-over-abandoned = 本回合双方魔法师都没有释放法术，决斗作废；胜利点数条为{ $track }
duel-over-stopped = 决斗被中止；胜利点数条为{ $track }
duel-no-winner = 没有胜者。
duel-wins = 🏆 { $player } 获胜！
duel-draw = 平局。
duel-stopped = 🛑 { $player } 中止了决斗，没有胜者（胜利点数条为{ $track }）。用 `!决斗 <玩家> [魔法师]` 再来一局。

## 状态
duel-result-stopped = 已中止，没有胜者
duel-result-winner = 胜者 { $player }
duel-result-draw = 平局
duel-result-unfinished = 尚未结束
duel-status-head = 决斗：{ $first }（{ $first-wizard }）对 { $second }（{ $second-wizard }）。{ $state }胜利点数条：{ $track }（30 点获胜）。
duel-status-finished = 已结束：{ $result }。
duel-status-round = 第 { $round } 回合第 { $step } 步。
duel-status-pools = 元素池：{ $pools }。
duel-status-seals = 本回合的元素封印（规则 D-10）：{ $seals }
duel-status-so-far = 本回合已放置：{ $placed }{ $waits }
duel-status-complete = （已完成）
duel-status-waits = 。第 { $step } 步正在等待 { $players }（{ $deadline } 超时）。

## 魔法师
duel-wizards = 魔法师：{ $wizards }{ $ended ->
    [yes] {""}
   *[no] 。
}用 `!决斗 <玩家> <魔法师>` 或 `!接受 <魔法师>` 选择魔法师。
duel-wizard-house = （内置）
duel-wizard-no-favours = ，没有擅长的元素
duel-wizard-favours = ，擅长
duel-wizard-name = { $name ->
    [Apprentice] 法师
    [Pyromancer] 火法师
    [Stormcaller] 雷风法师
    [Geomancer] 土法师
   *[other] { $name }
}

## 拒绝理由
duel-did-you-mean = 你是想输入 `{ $word }` 吗？
duel-error-unknown-command = `{ $word }` 不是决斗命令；决斗命令有 `!施法`、`!状态`、`!认输` 和 `!停止`。
duel-error-public-cast = 别在房间里暴露你的法术！请改在这里发送 `!施法 …`（`!帮助 施法` 列出所有标记；双方魔法师放置标记之前，法术是隐藏的）。
duel-error-no-tokens = `!施法` 至少需要一个标记，例如 `!施法 迸发 火 风 协调`。标记：{ -token-list }。
duel-error-unknown-token = `{ $word }` 不是法术标记。{ $suggestion }标记：{ -token-list }。
duel-error-unread = { $message }
duel-error-not-a-player = 你没有参加这场决斗（{ $first } 对 { $second }），而这个房间只能有一张桌子：到别的房间用 `!决斗 <玩家>` 挑战别人，或者等这场决斗结束（`!状态` 可以查看）。
duel-error-may-not-stop = 只有房间管理员、游戏主持人和机器人管理员可以中止决斗；想退出的玩家可以 `!认输`（对手获胜）。
duel-error-over = 这场决斗已经结束（{ $result }）；用 `!决斗 <玩家>` 开始新的决斗。
duel-error-missing-preconditioning = 法术以元素预调理开始，但 `{ $token }` 会排在最前面（规则：恰好一个元素预调理，然后是元素）。请以 `迸发`、`专注`、`超速` 或 `反制` 开头，例如 `!施法 迸发 { $token }`。
duel-error-second-preconditioning = 一个法术只有一个元素预调理（规则）；这个法术已经有 `{ $first }`，不能再加 `{ $second }`。请改为排入元素或 `协调`。
duel-error-overspeed-needs-element = `超速` 的标记与第一个元素一起放置，所以 `协调` 不能紧跟其后。请在它后面排入一个元素，例如 `!施法 超速 火 协调`。
duel-error-conflict = `{ $element }` 不能紧接着 `{ $before }` 唤起（规则 D-3：相冲突的元素不能紧接着唤起，虚无也不能连续唤起）。在 `{ $before }` 之后可以唤起 { $allowed }，或 `协调`。
duel-error-sealed = 本回合你法术的前 { $positions } 个元素位置不能唤起 `{ $element }`（规则 D-10：被元素封印的是 { $sealed-names }），而它会是第 { $number } 个元素。请在那里唤起别的元素。
duel-error-pool-empty = 你的元素池里已经没有 `{ $element }` 可用了（规则 D-4：元素池中有 { $in-pool } 个，已排队 { $queued } 个）。请唤起别的元素或 `协调`；`!状态` 可以查看你的元素池。
duel-error-after-end = 你的法术已经以 `协调` 结束，`{ $extra }` 不能跟在后面。你的下一个法术在本回合结算后开始。
duel-error-spell-complete = 你本回合的法术已经完成（{ $why ->
    [interrupted] 你的专注被打断了
   *[ended] 它以 `协调` 结束
}）；请等本回合结算，再释放下一个法术。
duel-error-seats = 决斗恰好由两位魔法师进行，而不是 { $count } 位：用 `!决斗 <玩家> [魔法师]` 挑战一位玩家。
duel-error-same-player = { $player } 不能和自己决斗：用 `!决斗 <玩家>` 挑战别的玩家。
duel-error-unknown-wizard = 没有名为 `{ $name }` 的魔法师。{ $suggestion }魔法师：{ $known }；`!魔法师` 可以查看他们的元素池。

## 决斗挑战（`!决斗`）：大厅的通用说法不合适的地方，用决斗自己的话（`challenge_words`）
duel-challenge = { $challenger } 向 { $opponent } 发起决斗！{ $opponent }：输入 `!接受 [魔法师]` 或 `!拒绝`（`!魔法师` 列出所有魔法师）。
# { $choice } 是挑战者的魔法师。
duel-challenge-as = { $challenger } 以 { $choice } 向 { $opponent } 发起决斗！{ $opponent }：输入 `!接受 [魔法师]` 或 `!拒绝`（`!魔法师` 列出所有魔法师）。
duel-challenge-declined = { $player } 拒绝了与 { $other } 的决斗。
duel-challenge-self = 你不能和自己决斗：输入 `!决斗 <玩家>`，写上另一名玩家的名字。

## 帮助（`!帮助`）
# 游戏名，`!开局` 接受它。
duel-name = 决斗
duel-summary = 两位魔法师分步秘密释放元素法术，把共同的胜利点数条推到 30
duel-help-cast = 私信发给我：为你本回合的法术排入标记，每步放置一个（`!施法 迸发 火 风 协调`）。法术依次是一个元素预调理（迸发 专注 超速 反制）、若干元素（水 火 雷 风 土 虚无）、最后协调。顺序：元素围成一圈，水 火 雷 风 土，相邻的元素相冲突，不能紧接着唤起（火之后可以唤起火、风、土或虚无），也不能连续唤起虚无（规则 D-3）。
duel-help-status = 显示回合、步、胜利点数条、双方的元素池和元素封印；私信查询时还显示你自己排队中的法术。
duel-help-concede = 认输：对手获胜。
duel-help-stop = 房间管理员、游戏主持人和机器人管理员：中止决斗，没有胜者（玩家想退出请用 `!认输`）。
duel-help-challenge = 在本房间向一名玩家发起决斗。
duel-help-wizards = 列出决斗的魔法师及其元素池。

## 规则速查（`!规则 D-10`，网站的 `/rules/duel`）：RULES.md 的定点，简写
duel-rule-d1 = 胜利点数条推到自己这边 30 点的魔法师获胜。
duel-rule-d2 = 结算之后若有一方的元素池干涸，决斗结束：胜利点数条偏向的一方获胜；正好为 0 则平局。
duel-rule-d3 = 元素围成一圈：水 → 火 → 雷 → 风 → 土 → 水。基础元素和它相邻的两个元素相冲突，唤起之后不能紧接着唤起它们；虚无只与自己相冲突（不能连续唤起虚无）。
duel-rule-d4 = 唤起的每个元素都从你的元素池中取出，即使之后被移除或丢弃也已花费；元素池里没有的元素不能唤起。
duel-rule-d5 = 专注施法：本法术的专注判定改用专注序列，默认骰子点数至少为 3、3、2、2、2。
duel-rule-d6 = 性质相反（完全反制所需）：两个相冲突的基础元素，即圈上相邻的元素；虚无与任何元素都不相反。
duel-rule-d7 = 完全反制按施放时的法术判定，在结算之前：你的法术等级不低于对手，且在所有位置上的元素均和对手的元素性质相反，则视为这一回合对方没有释放法术；等级正好相等时你的基础威力翻倍。
duel-rule-d8 = 专注判定序列：骰子点数至少为 4、4、3、2、2（第一次判定、第二次……）；超出序列后沿用最后一个值。
duel-rule-d9 = 一步超时仍未放置标记的魔法师，视为放置了协调标记（第 0 步则视为魔力迸发）；超时会公布。
duel-rule-d10 = 相同的基础元素连续唤起 `k ≥ 2` 个，会封印圈上与它相邻的两个元素：对手下回合法术的前 `P` 个元素位置不能唤起被封印的元素，`P = Σ(k − 1)`。例如火火：对手第一个元素不能唤起水或雷。
duel-rule-d11 = 一方法术某位置上是虚无时，将对手法术在该位置上的标记移除（双方都是虚无则都移除）；被移除的标记留下空隙，两侧的元素不算连续唤起。
duel-rule-d12 = 元素爆炸：在每个虚无、空隙或与前一个相同的元素处把法术分段；每段长度 `L ≥ 3` 提升 `L²` 威力。例如火风水雷：16 + 16 = 32。
duel-rule-d13 = 魔法师是数据：名字、元素池和擅长的属性（给具有该属性的法术加威力）；默认魔法师 `Apprentice` 有每种基础元素各 8 个、虚无 4 个。`!魔法师` 列出所有魔法师。

## 旁观网站在决斗桌页面上先列出的事实。
duel-fact-track = 轨道
duel-fact-winner = 胜者
duel-fact-round = 回合
duel-fact-cast = 已施法
duel-fact-not-cast = 尚未施法

## `!战绩` 与 `!排行`（本游戏的战绩用语，`record_words`）。
duel-record = 决斗：等级分 { $rating } ± { $deviation }，共 { $games } 场（{ $won } 胜 { $lost } 负{ $drawn }）；最常用的魔法师 { $choice }；最长连胜 { $streak } 场。
duel-top-none = 还没有人有决斗等级分：决斗结束时才会给玩家评分。用 `!决斗 <玩家>` 挑战别人。
duel-top = 决斗等级分（Glicko-2，共 { $rated } 人）：{ $entries }。
duel-top-entry = { $place }. { $player } { $rating } ± { $deviation }（{ $won } 胜 { $lost } 负{ $drawn }）
duel-top-few = 还没有玩家打满 { $min } 场评分决斗：满了才会上 `!排行`。`!战绩` 可以查看每个人的战绩。
# 网站排行榜上本游戏表格的标题。
duel-board = 决斗（Glicko-2）
