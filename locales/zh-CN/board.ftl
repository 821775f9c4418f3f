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
