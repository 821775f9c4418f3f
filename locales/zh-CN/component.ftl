### 以 WebAssembly 组件载入的游戏（daemon/wasm/）：宿主自己说的话。

component-failed = { $game } 游戏处理这一步时出错（{ $error }）。什么都没有改变，本桌已暂停：主持人可以用 `!resume` 让它重试，或用 `!stop` 结束它。其他桌照常进行。
component-paused = 这张 { $game } 桌因游戏出错而暂停（{ $error }）：主持人可以用 `!resume` 让它重试，或用 `!stop` 结束它。
component-resumed = { $player } 让 { $game } 桌继续：又可以走棋了。
component-help-resume = 主持人：让因游戏出错而暂停的桌重新接受走棋（用 `!stop` 则结束它）。
component-resume-not-allowed = 只有主持人、房间管理员或机器人管理员可以用 `!resume` 让一桌继续；玩家请等待他们。
component-help-view = 私下告诉你本桌你能看到的情况（轮到谁、你能做什么）；在房间里问，回答也私下发给你。
component-view-failed = { $game } 游戏显示你的视图时出错（{ $error }）。什么都没有改变，走棋照常进行。
