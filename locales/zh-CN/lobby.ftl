### 守护进程的大厅：`!帮助`、`!游戏`、`!开局`、挑战、`!语言`，以及机器人管理员的
### `!屏蔽`（daemon/src/router/help.rs、mod.rs、challenges.rs、language.rs、ignore.rs）。
### 反引号中的文字显示为代码；其中的命令使用配置的前缀。消息 id 以文件名开头。

## `!帮助` 与 `!游戏`
lobby-help = 命令：{ $commands }。
lobby-help-at-table = 本房间的{ $game }桌：{ $table }。
lobby-help-game = { $game }桌：{ $table }。
lobby-help-private = { $commands }；私信机器人：{ $private }
lobby-help-masters = { $commands }；主持人和房间管理员：{ $masters }
lobby-help-explain = `!帮助 <命令>` 解释其中一条；`!规则` 列出规则。
lobby-help-topic = `{ $usage }` —— { $summary }
lobby-help-topic-separator = {" | "}
lobby-games = 游戏：{ $games }。开局方式：{ $ways }。
lobby-games-entry = { $game } —— { $summary }
lobby-games-separator = {"；"}
lobby-unknown = 未知命令 `{ $command }`。输入 `!帮助` 查看命令列表。
lobby-unknown-guess = 未知命令 `{ $command }`。你是想输入 `{ $guess }` 吗？输入 `!帮助` 查看命令列表。
lobby-no-game = 本房间还没有游戏。开局方式：{ $ways }。

## 大厅命令的说明（`!帮助 <命令>`）。
lobby-summary-help = 列出所有命令，或解释其中一条。
lobby-summary-games = 列出可以玩的游戏。
lobby-summary-new = 在本房间开一张该游戏的桌子，你成为主持人（`!开局 魔素`）。
lobby-summary-accept = 接受向你发起的挑战。
lobby-summary-decline = 拒绝挑战（或撤回你自己的挑战）。
lobby-summary-withdraw = 撤回你在本房间发起的挑战；主持人或房间管理员可以清除任何人的挑战（`!停止` 也可以）。挑战也会自行过期（默认十分钟，除非管理员为该游戏设置了 `challenge_lifetime`）。
lobby-summary-link = 把你在两个网络上的身份绑定为同一名玩家：`!绑定` 私下给你一个绑定码；再从另一个网络私下向机器人发送 `!绑定 <绑定码>`。
lobby-summary-unlink = 解除你绑定的身份。
lobby-summary-ignore = 机器人管理员：屏蔽一名玩家的命令和聊天（只通知一次）；不带参数时列出被屏蔽的人。
lobby-summary-unignore = 机器人管理员：恢复接收被屏蔽玩家的命令和聊天。
lobby-summary-board = 在本房间的 Matrix 房间里显示本桌的局面图（在别处则说明去哪里看）。
lobby-summary-stats = 一名玩家在各个游戏里的战绩：对局数、胜场、等级分及该游戏另记的成绩（不带参数时：你自己的）。
lobby-summary-top = 前十名：按等级分排列的决斗玩家（`!排行 决斗`，默认）或按赛季金币排列的魔素玩家（`!排行 魔素`）。只计入评分局，玩家满 3 局才会上榜：对手是访客（所在网络有账号而对方未登录）的决斗、开局一分钟内认输的决斗、只有一名玩家的魔素赛季、靠游戏主持人给的金币赢下的魔素赛季，都不评分（`!战绩` 会把它们列为不评分）。
lobby-summary-lang = 说明本房间（私聊时：你的私信）使用哪种语言；`!语言 zh` 或 `!语言 en` 可以更改（在房间里只有房间管理员和主持人可以更改）。

## `!开局`
lobby-new-which = `!开局` 需要一个游戏。开局方式：{ $ways }。
lobby-new-private = 请在你想玩的房间里开桌，而不是在私信里。
lobby-new-unknown = 没有叫 `{ $game }` 的游戏。游戏：{ $games }。
lobby-new-unknown-guess = 没有叫 `{ $game }` 的游戏。你是想输入 `!开局 { $guess }` 吗？游戏：{ $games }。
lobby-new-busy = 本房间已经有一张{ $game }桌了；每个房间只能有一张桌子。请先结束它（由主持人输入 `!停止`；决斗中输入 `!认输`），或者去别的房间玩。

## 挑战，适用于任何以挑战开局的游戏。属于游戏的话取自游戏本身
## （daemon/src/router/challenge_words.rs）：{ $game } 是游戏名，{ $accept } 是带上选择接受挑战的写法
## （`!接受 [颜色]`），{ $usage } 是它的挑战命令（`!决斗 <玩家> [魔法师]`；在 `-self` 中只带玩家），
## { $usages } 是所有游戏的挑战命令（代码格式）。游戏可以用自己的句子说 `-challenge`、`-challenge-as`、
## `-declined` 和 `-challenge-self`（`GamePlugin::challenge_words`：决斗的是 duel.ftl 里的 `duel-challenge…`）。
lobby-challenge = { $challenger } 向 { $opponent } 发起{ $game }挑战！{ $opponent }：输入 `{ $accept }` 或 `!拒绝`。
# { $choice } 是挑战者选定的（棋子、角色等）。
lobby-challenge-as = { $challenger } 选了 { $choice }，向 { $opponent } 发起{ $game }挑战！{ $opponent }：输入 `{ $accept }` 或 `!拒绝`。
lobby-challenge-private = 请在你想玩的房间里发起挑战：在那里输入 `{ $usage }`。
lobby-challenge-nobody = 这里没有叫 `{ $name }` 的人。请按昵称、显示名或 Matrix 用户标识挑战本房间（或与之桥接的房间）里的人：`{ $usage }`。
lobby-challenge-self = 你不能挑战自己：输入 `{ $usage }`，写上另一名玩家的名字。
lobby-challenge-busy = 本房间已经有一张桌子了；每个房间只能有一张桌子。请先结束它，或者去别的房间发起挑战。
lobby-challenge-pending = { $challenger } 已经在这里向 { $opponent } 发起了挑战；请等待 `!接受` 或 `!拒绝`。
lobby-accept-none = 本房间里没有人向你发起挑战。用 { $usages } 挑战别人。
lobby-declined = { $player } 拒绝了 { $other } 的{ $game }挑战。
lobby-withdrawn = { $player } 撤回了对 { $other } 的挑战。
lobby-decline-none = 本房间里没有可以由你拒绝的挑战。
lobby-withdraw-none = 本房间里没有可以撤回的挑战；{ $usages } 可以发起一个。
lobby-withdraw-not-yours = 只有发起挑战的 { $challenger }、主持人或房间管理员可以撤回它；{ $opponent } 可以 `!拒绝` 它。挑战发起 { $lifetime }后会自行过期。
lobby-challenge-cleared = { $player } 清除了 { $challenger } 对 { $opponent } 的挑战。
lobby-challenge-expired = { $challenger } 对 { $opponent } 的挑战无人回应，已经过期；{ $usages } 可以发起新的挑战。
lobby-lifetime = { $unit ->
    [ten-minutes] 十分钟
    [one-minute] 一分钟
    [one-hour] 一小时
    [hours] { $count } 小时
    [minutes] { $count } 分钟
   *[seconds] { $count } 秒
}

## `!语言`
lobby-lang-room = 本房间使用{ $language }。房间管理员和本桌主持人可以用 `!语言 zh` 或 `!语言 en` 更改；私下对我说，则更改你的私信语言。
lobby-lang-private = 你的私信使用{ $language }。在这里输入 `!语言 zh` 或 `!语言 en` 可以更改。
lobby-lang-unknown = 我不会说 `{ $word }`：请输入 `!语言 en` 或 `!语言 zh`。
lobby-lang-not-allowed = 只有本房间的管理员和本桌的主持人可以选择房间的语言；私下对我说 `!语言 zh` 可以更改你的私信语言。
lobby-lang-room-already = 本房间已经在使用{ $language }。
lobby-lang-private-already = 你的私信已经在使用{ $language }。
lobby-lang-room-chosen = 本房间现在使用{ $language }。
lobby-lang-bridge-chosen = 本房间及与之桥接的房间现在使用{ $language }。
lobby-lang-private-chosen = 你的私信现在使用{ $language }。
lobby-language = { $code ->
    [zh-CN] 简体中文（`zh`）
   *[en] 英语（`en`）
}

## `!屏蔽` 与 `!取消屏蔽`（机器人管理员）
lobby-ignored-notice = 机器人的管理员要求我屏蔽你：我不会再接受你的命令，也不会转发你说的话。如果你认为这是误会，请联系管理员。
lobby-ignore-not-admin = 只有机器人的管理员（配置中的 `[permissions] admins`）可以屏蔽玩家。
lobby-unignore-not-admin = 只有机器人的管理员（配置中的 `[permissions] admins`）可以恢复被屏蔽的玩家。
lobby-ignore-nobody = 没有人被屏蔽。`!屏蔽 <玩家>` 可以屏蔽一名玩家。
lobby-ignore-list = 已屏蔽：{ $players }。`!取消屏蔽 <玩家>` 可以恢复一名。
lobby-ignore-self = 你不能屏蔽自己。
lobby-ignore-admin = `{ $player }` 是机器人管理员，不能被屏蔽；请先把他从 { $setting } 中删除。
lobby-ignore-already = `{ $player }` 已经被屏蔽了。
lobby-ignoring = 已屏蔽 `{ $player }`：通知一次之后，他的命令和聊天都会被丢弃。`{ $undo }` 可以撤销。
lobby-unignore-not = `{ $player }` 没有被屏蔽；`!屏蔽` 列出被屏蔽的人。
lobby-unignored = 不再屏蔽 `{ $player }`。

## `!规则`（RULES.md 的定点，取自各游戏：`GamePlugin::rules`）
lobby-summary-rules = 本房间游戏的规则编号（`RULES.md` 的定点，引用形式为 `（规则 D-10）`）；`!规则 D-10` 说明其中一条。
lobby-rules-game = { $game }的规则：{ $ids }。`!规则 <编号>` 说明其中一条，例如 `!规则 { $example }`。{ $site }
lobby-rules-games = 规则：{ $games }。`!规则 <编号>` 说明其中一条，例如 `!规则 { $example }`。{ $site }
lobby-rules-of = { $game } { $ids }
lobby-rules-span = { $first } … { $last }
lobby-rules-site = 全部规则：{ $url }
lobby-rules-rule = { $id }（{ $game }）：{ $text }
lobby-rules-unknown = 没有规则 `{ $typed }`。规则有 { $games }：例如输入 `!规则 { $example }`。
