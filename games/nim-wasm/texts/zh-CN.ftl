### 组件自己的话，接在内置取石子（locales/zh-CN/nim.ftl）之后：build.sh 一起打包。
### 它的私下视图（宿主的 `!view`）和选项的拒绝。

## 玩家的私下视图
nim-view-your-turn = 轮到你了：从一堆里取 1 到 { $most } 颗石子，例如 `!take { $amount } { $pile }`。各堆：{ $piles }。
nim-view-their-turn = 取石子：现在轮到 { $player }，下一步是你。各堆：{ $piles }。
nim-view-waiting = 取石子：你在等对手 `!join`。各堆：{ $piles }。
nim-view-not-playing = 你没有在这桌下棋；有空位就输入 `!join`。各堆：{ $piles }。

## 选项（[[game]] 里的 [game.options]）
nim-option-unknown = 这个取石子的选项里有 `{ $option }`，它不认识：它唯一的选项是 `piles = [3, 5, 7]`（三堆，每堆 1 到 10 颗）。请机器人管理员修改配置里的 [game.options]。
nim-option-piles = 这个取石子的选项 `{ $given }` 不是三堆 1 到 10 颗的石子：请在配置的 [game.options] 下写 `piles = [3, 5, 7]`。
