# 局面图的文字说明，供不显示图片的客户端使用（Matrix 的 `body`）。
board-duel-seat = { $player }（{ $wizard }）
board-duel-against = {" 对 "}
board-duel = 第 { $table } 桌的决斗局面：{ $seated }；胜利点数条在 { $track }。
board-duel-toward = 第 { $table } 桌的决斗局面：{ $seated }；胜利点数条偏向 { $leader } { $track } 点。
board-duel-won = { $winner } 获胜。
board-duel-draw = 平局。
board-thaum-coins = { $player } { $coins }
board-thaum-separator = {"、"}
board-thaum = 第 { $table } 桌的魔素局面：第 { $season } 赛季，第 { $phase } 阶段，循环不稳定度 { $instability }/9；金币：{ $coins }。
board-other = 第 { $table } 桌的 { $game } 局面。

# 图片上画的文字（daemon/src/board/duel.rs、thaum.rs）。中文标签的每个字都必须在随程序
# 发布的字体里（scripts/subset-font.sh）。
board-label-duel = 决斗
board-label-versus = { $first } 对 { $second }
board-label-draw = 已结束：平局
board-label-winner = 已结束：{ $winner } 获胜
board-label-stopped = 已中止：没有胜者
board-label-finished = 已结束
board-label-round = 第 { $round } 回合
board-label-goal = { $player } 的终点
board-label-even = 持平（0）
board-label-toward = 偏向 { $player } { $points } 点
board-label-track = 胜利点数条：{ $where }
board-label-wizard = 魔法师
board-label-cast = 已施法
board-label-not-cast = 尚未施法
board-label-no-seal = 下一个法术没有元素封印
board-label-sealed = 前 { $positions } 个元素位置被封印：
board-label-no-round = 还没有结算过回合
board-label-spell = 第 { $round } 回合：威力 { $power }
board-label-level = { $level } 级
board-label-countered = 被反制
board-label-interrupted = 被打断
board-label-separator = {" · "}
board-label-after-even = 持平
board-label-after = 第 { $round } 回合后：{ $where }
board-label-thaum = 魔素
board-label-season = 第 { $season } 赛季 · 第 { $phase } 阶段
board-label-instability = 循环不稳定度 { $instability }/{ $limit }
board-label-table-stopped = 这张桌子已停止
board-label-manual = 主持人输入 !阶段 下一 时本阶段结束
board-label-phase-ends = 第 { $phase } 阶段于 { $when } 结束
board-label-when = { $date }（{ $day }）{ $time } UTC
board-label-player = 玩家
board-label-mana = 法力
board-label-fire = 火
board-label-water = 水
board-label-earth = 土
board-label-air = 风
board-label-coins = 金币
board-label-no-players = 还没有玩家：输入 !加入
board-label-day = { $day ->
    [0] 星期日
    [1] 星期一
    [2] 星期二
    [3] 星期三
    [4] 星期四
    [5] 星期五
   *[6] 星期六
}

# 在不显示图片的地方输入 `!棋盘`（daemon/src/router/board.rs）。
board-where = 本房间桌子的局面图：{ $link }
board-where-not = 局面图显示在本桌的 Matrix 房间和观战网站上；在这里输入 `!状态` 可以查看本桌。
