### 魔素（Thaum，RULES 第一个游戏）：公告与拒绝理由。
### 术语见 locales/GLOSSARY.md。`{" "}` 保留 Fluent 会去掉的首尾空格。

## 词
thaum-fire = 火
thaum-water = 水
thaum-earth = 土
thaum-air = 风
thaum-more = { $first }，{ $rest }
thaum-nobody = 无人
thaum-no-players = 没有玩家
thaum-not-taken = （{ $count } 枚无法扣除：金币最少为 0，规则 T-9）
thaum-roll = { $player } 的{ $thaum } { $step }（{ $before } → { $after }）
thaum-rolls-more = { $first }；{ $rest }
thaum-standing = 第 { $place } 名 { $player } { $coins } 金币
thaum-defeats = { $attacker }克制{ $defender }
thaum-strength = 克制表（进攻的一行对防守的 火、水、土、风）：{ $rows }。{ $defeats }。
thaum-ends-at = 于 { $date }（{ $day }）{ $time } UTC{" "}
thaum-ends-by-command = 在主持人输入 `!阶段 下一` 时
thaum-sunday = 星期日
thaum-monday = 星期一
thaum-tuesday = 星期二
thaum-wednesday = 星期三
thaum-thursday = 星期四
thaum-friday = 星期五
thaum-saturday = 星期六

## 事件
thaum-opened = { $player } 开了一张魔素桌并担任主持人。第 1 赛季第 1 阶段开始：{ $player } 持有 1 点法力；本阶段{ $ends }结束。输入 `!加入` 加入，输入 `!状态` 查看你的状况。
thaum-joined = { $player } 加入魔素桌，持有 { $mana } 点法力。
thaum-added = { $by } 把 { $player } 加入魔素桌，持有 { $mana } 点法力。
thaum-gathered = { $player } 把 { $spent } 点法力聚入{ $thaum }：{ $change }{ $lost }；剩余 { $left } 点法力。
thaum-lost-to-cap = （{ $lost } 点法力因上限 10 而损失）
thaum-blood-magic = { $player } 对{ $thaum }施放血魔法：{ $change }，法力 +{ $granted }（现为 { $left }）。
thaum-alchemy = { $player } 以 { $spent } 点法力对{ $first } { $first-value } 和{ $second } { $second-value } 施放炼金术：结果 = { $spent } × { $first-value } × { $second-value } = { $n }。金币 { $coins }。{ $first }和{ $second }归零；剩余 { $left } 点法力。
thaum-bending-self = { $caster } 以 { $spent } 点法力扭曲自己的魔素：攻击 { $attack } × { $spent }；自己的魔素承受攻击后全部归零；剩余 { $left } 点法力。
thaum-bending = { $caster } 以 { $spent } 点法力扭曲 { $defender }：攻击 { $attack } × { $spent }；{ $defender } 现在的魔素为 { $after }。{ $caster } 的魔素归零；剩余 { $left } 点法力。
thaum-summoning = { $caster } 与 { $partner } 一同召唤（{ $spent } 点法力）：结果 = { $n }。{ $caster }：金币 { $caster-coins }；{ $partner }：金币 { $partner-coins }。双方的魔素归零；{ $caster } 剩余 { $left } 点法力。
thaum-tornado = { $caster } 以 { $spent } 点法力对 { $target } 施放龙卷风{ $draws }。{ $caster } 现在的魔素为 { $caster-thaums }；{ $target } 为 { $target-thaums }。
thaum-tornado-seed = （骰子种子 { $seed }）：{ $rolls }{ $more }
thaum-tornado-nothing = ：没有掷骰
thaum-tornado-more = ；……另有 { $count } 次（全部记录在历史中）
thaum-phase-forced = { $player } 结束了本阶段。
thaum-phase-ended = 第 { $season } 赛季第 { $phase } 阶段结束：循环不稳定度 { $before } → { $after }。
thaum-loop-ended = 循环不稳定度达到 { $limit } 或以上，循环结束，第 { $season } 赛季落幕。最终排名：{ $standings }。
thaum-season-began = 第 { $season } 赛季开始：每位玩家的法力、金币和魔素都归零。
thaum-phase-began = 第 { $phase } 阶段开始：每位玩家获得 1 点法力；本阶段{ $ends }结束。
thaum-instability = { $player } { $how ->
    [set] 把循环不稳定度设为 { $before } → { $after }
    [raise] 把循环不稳定度从 { $before } 提高到 { $after }
    [floor] 把循环不稳定度从 { $before } 降到 { $after }（最低为 0）
   *[lower] 把循环不稳定度从 { $before } 降到 { $after }
}（阶段结束时达到 { $limit } 或以上即结束循环）。
thaum-coins-adjusted = { $by } 调整了 { $player } 的金币：{ $coins }。
thaum-gm-added = { $by } 让 { $player } 成为本桌的主持人；现在的主持人是 { $game-masters }。
thaum-gm-stepped-down = { $player } 卸任本桌的主持人；现在的主持人是 { $game-masters }。
thaum-gm-removed = { $by } 撤销了 { $player } 的主持人身份；现在的主持人是 { $game-masters }。
thaum-gm-list = 这里的主持人是 { $game-masters }。主持人可以用 `!主持 添加 <玩家>` 添加主持人，用 `!主持 移除 <玩家>` 撤销。
thaum-sheet = { $player } 的角色卡：法力 { $mana }，金币 { $coins }；{ $thaums }；血魔法{ $blood-magic ->
    [used] 本阶段已用
   *[ready] 可用
}，龙卷风{ $tornado ->
    [used] 本阶段已用
   *[ready] 可用
}。（第 { $season } 赛季第 { $phase } 阶段，循环不稳定度 { $instability }。）
thaum-summary = 魔素：第 { $season } 赛季第 { $phase } 阶段，循环不稳定度 { $instability }（阶段结束时达到 { $limit } 或以上即结束循环）。主持人：{ $game-masters }。玩家：{ $players }{ $state }{ $strength }
thaum-summary-player = { $player }（法力 { $mana }，金币 { $coins }）
thaum-summary-stopped = 。本桌已停止。
thaum-summary-ends = 。本阶段{ $ends }结束。
thaum-stopped = { $player } 停止了魔素桌。第 { $season } 赛季最终排名：{ $standings }。这个房间可以开新桌了（`!开局 魔素`）。

## 拒绝理由
thaum-did-you-mean = （你是想输入 `{ $player }` 吗？）
thaum-spell-summoning = 召唤术
thaum-spell-tornado = 龙卷风
thaum-spell-bending = 扭曲术
thaum-spell-other = 这个法术
thaum-error-no-opener = 开魔素桌需要一位玩家。
thaum-error-private = 魔素的行动要发在游戏房间里，让大家都看得到：请在那里输入。只有 `!状态` 可以私下回答。
thaum-error-stopped = 这张魔素桌已经停止：用 `!开局 魔素` 开一张新桌。
thaum-error-not-a-player = 你还没有在这里玩魔素：请先输入 `!加入`。
thaum-error-already-joined = 你已经在这里玩魔素了（规则 T-4）：输入 `!状态` 查看你的角色卡。
thaum-error-already-playing = 本桌已经有玩家 { $player }（规则 T-4）：输入 `!状态 { $player }` 查看其角色卡。
thaum-error-bad-name = `{ $typed }` 不能作为玩家名：输入 `!添加 <玩家>`，例如 `{ $example }`。
thaum-error-unknown-player = `{ $typed }` 不是本桌的玩家{ $suggestion }；玩家有 { $players }：请用其中一个名字输入 `!{ $command } { $usage }`。
thaum-error-not-game-master = 只有主持人可以使用 `!{ $command }`；这里的主持人是 { $game-masters }。
thaum-error-not-seated = `{ $typed }` 不在本桌{ $suggestion }，而只有本桌的玩家才能成为主持人：先用 `!添加 { $typed }` 让其入座，再输入 `!主持 添加 { $typed }`。
thaum-error-already-game-master = 这里的主持人已经包括 { $player }（主持人是 { $game-masters }）。
thaum-error-not-among-game-masters = `{ $typed }` 不是这里的主持人；主持人是 { $game-masters }：请用其中一个名字输入 `!主持 移除 <玩家>`。
thaum-error-last-game-master = 魔素桌必须保留一位主持人，而 { $player } 是这里唯一的主持人：先让另一位玩家成为主持人（`!主持 添加 <玩家>`），再撤销 { $player }。
thaum-error-not-enough-mana = 你持有 { $held } 点法力，不能花费 { $wanted } 点（规则 T-9）：最多花费 { $held } 点，例如 `!{ $command } { $held } { $args }`。
thaum-error-blood-magic-used = 血魔法每个阶段只能施放一次（规则 T-1），你在本阶段已经施放过了：下一阶段开始后再施放。
thaum-error-tornado-used = 龙卷风每个阶段只能施放一次（规则 T-1），你在本阶段已经施放过了：下一阶段开始后再施放。
thaum-error-same-thaum = 炼金术需要两种不同的魔素，而不是两次{ $thaum }：例如输入 `!炼金 { $mana } { $first } { $second }`。
thaum-error-self-target = { $spell }需要另一位玩家，不能是你自己：用另一位玩家的名字输入 `!{ $command } <法力> <玩家>`。

## 帮助（`!帮助`）
# 游戏名，`!开局` 接受它。
thaum-name = 魔素
thaum-summary-line = 规则可以由玩家改写的魔法游戏：把每个阶段的法力化为火、水、土、风四种魔素，施放法术赢取金币
thaum-help-join = 加入这张魔素桌；你会得到本阶段的 1 点法力（规则 T-4）。
thaum-help-gather = 聚能：花费法力，把一种魔素提高同样的数值（魔素保持在 -10..10 之间）。
thaum-help-blood = 血魔法，每阶段一次：把一种魔素降低指定数值，获得与实际降低量相同的法力（规则 T-5）。
thaum-help-alchemy = 炼金术：获得 法力 × 第一种魔素 × 第二种魔素 枚金币（结果为负则扣除金币），然后两种魔素归零。
thaum-help-bend = 扭曲术：把 法力 ×（你的魔素 × 克制表）加到一位玩家的魔素上（可以指定你自己），然后你的魔素全部归零（规则 T-6）。火克制风，水克制火，土克制水，风克制土。
thaum-help-summon = 与另一位玩家一同召唤：双方都获得 结果 = 你的魔素 × 克制表 × 对方的魔素 枚金币（为负则扣除）；法力不放大结果（规则 T-7）；然后双方的魔素全部归零。
thaum-help-tornado = 对另一位玩家施放龙卷风，每阶段一次：每 1 点法力让你或对方随机一种魔素变动 ± 你当前的风值（规则 T-8）；然后你的风归零。骰子种子会公开（规则 T-10）。
thaum-help-status = 你的角色卡、另一位玩家的角色卡或整张桌子：赛季、阶段、循环不稳定度和克制表。
thaum-help-phase = 主持人：像日程到时一样立即结束本阶段（规则 T-2）。
thaum-help-instability = 主持人：设定、提高或降低循环不稳定度；阶段结束时达到 9 或以上即结束循环（规则 T-3）。
thaum-help-coins = 主持人：设定、发放或扣除一位玩家的金币（金币最少为 0，规则 T-9）。
thaum-help-add = 主持人：登记一位玩家，其获得本阶段的 1 点法力（规则 T-4）。
thaum-help-gm = 主持人：让本桌的一位玩家成为主持人（`!主持 添加 bob`）或撤销一位（`!主持 移除 bob`；桌上始终保留一位主持人）。单独输入 `!主持` 可列出主持人，任何人都能用。
thaum-help-stop = 主持人或房间管理员：结束这张桌子并公布最终排名；之后这个房间可以开新桌。

## 规则速查（`!规则 T-3`，网站的 `/rules/thaum`）：RULES.md 的定点，简写
thaum-rule-t1 = 每个新阶段给每位玩家 1 点法力，并重置每阶段一次的法术（血魔法、龙卷风）。法力不会在阶段结束时失去，而是累积到循环结束。
thaum-rule-t2 = 默认每周三个阶段（UTC：周日至周二、周三至周四、周五至周六），每个循环从第 1 阶段起编号；主持人也可以用 `!阶段 下一` 结束当前阶段。
thaum-rule-t3 = 每个阶段结束时循环不稳定度加 1（主持人可用 `!不稳定` 调整）；此时若不低于 9，循环结束：公布最终排名（金币多者在前），下一赛季从第 1 阶段开始，一切归零。
thaum-rule-t4 = 玩家用 `!加入` 加入，或由主持人登记（`!添加`）；阶段中途加入的玩家获得本阶段的 1 点法力。
thaum-rule-t5 = 血魔法的数量必须是不小于 0 的整数；它降低该魔素，并给予等于实际降低量的法力。
thaum-rule-t6 = 扭曲术：攻击 = 你的魔素 × 克制表（`r = Sᵀa`）；对方的每项魔素加上 法力 × 攻击，然后你的魔素全部归零（对自己施放：全部归零）。
thaum-rule-t7 = 召唤术：结果 `N` = 你的魔素 × 克制表 × 对方的魔素；双方各得 `N` 枚金币（为负则扣除）。花费的法力不放大 `N`。
thaum-rule-t8 = 龙卷风：每点法力让你或对方的一项随机魔素变化 ± 你的风（每次重复时重新读取）；之后你的风归零。
thaum-rule-t9 = 法力和金币永不低于 0：花费超过持有的法力会被拒绝；扣除超过持有量的金币时归零，并说明有多少无法扣除。
thaum-rule-t10 = 每次掷骰都来自有记录的种子：桌子开局时公布秘密骰子密钥的 SHA-256 承诺，结束时公开密钥（魔素桌在每个赛季结束时也会公开），任何人都能核对每一次掷骰。

## 旁观网站在魔素桌页面上先列出的事实。
thaum-fact-season = 赛季
thaum-fact-phase = 阶段
thaum-fact-instability = 循环不稳定度
thaum-fact-players = 玩家
thaum-fact-mana = 法力
thaum-fact-fire = 火
thaum-fact-water = 水
thaum-fact-earth = 土
thaum-fact-air = 风
thaum-fact-coins = 金币

## `!战绩` 与 `!排行`（本游戏的战绩用语，`record_words`）。
thaum-record = 魔素：参加 { $rounds } 个赛季，赢了 { $won } 个{ $best }。
thaum-record-best = ；最好名次第 { $rank } 名（共 { $of } 人，第 { $table } 桌第 { $round } 赛季）
thaum-top-none = 还没有结束的魔素赛季。用 `!开局 魔素` 开一张桌子。
thaum-top-few = 还没有玩家打满 { $min } 个评分魔素赛季：满了才会上 `!排行 魔素`。`!战绩` 可以查看每个人的战绩。
thaum-top = 魔素排名（已结束的赛季共 { $rated } 个；先比金币，再比魔素）：{ $entries }。
thaum-top-entry = { $place }. { $player } { $score } 枚金币，魔素 { $tiebreak }（{ $rounds } 个赛季）
# 网站排行榜上本游戏表格的标题。
thaum-board = 魔素赛季
