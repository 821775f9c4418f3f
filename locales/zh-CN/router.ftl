### 路由器自己的回答：无法转交的命令、无法确定的名字，以及桌子的骰子密钥公告
### （daemon/src/router/）。消息 id 以文件名开头。

router-unknown-command = 未知命令 `!{ $word }`。
router-no-table = 你没有在任何桌子上游戏。请在桌子所在的房间加入（`!加入`，或接受一场 `!决斗`）。
router-several-tables = 你在多张桌子上游戏（{ $tables }）；请到该桌子所在的房间发送这条命令。
router-table-in-room = { $room } 的{ $game }桌
router-dice-commitment = 骰子承诺：`{ $commitment }`（本桌秘密骰子密钥的 SHA-256；桌子结束或换用新密钥时公开；规则 T-10）。
router-dice-new-commitment = 新的骰子承诺：`{ $commitment }`（本桌秘密骰子密钥的 SHA-256；桌子结束或换用新密钥时公开；规则 T-10）。
router-dice-revealed = 骰子密钥公开：`{ $key }`（它的 SHA-256 是 `{ $commitment }`，即这些掷骰之前公布的承诺）：现在任何人都可以核对每一次掷骰。
router-dice-commitment-short = 骰子承诺：`{ $short }…`（本桌秘密骰子密钥的 SHA-256；完整值见 { $page }；规则 T-10）。
router-dice-new-commitment-short = 新的骰子承诺：`{ $short }…`（本桌新秘密骰子密钥的 SHA-256；完整值见 { $page }；规则 T-10）。
router-dice-revealed-short = 骰子密钥公开：`{ $short }…`，对应承诺 `{ $commitment }…`：现在任何人都可以核对每一次掷骰（完整密钥见 { $page }；规则 T-10）。
# A Matrix player with no private chat with the bot: one was opened (unencrypted unless the
# config asks) so the bot could write to them privately; said where they last asked.
router-private-opened = 我已和你开了一个私聊，并在那里给你发了消息：接受它的邀请就能看到。
# 同上，附私聊的链接（Matrix：指向该私聊房间的 matrix.to 链接）。
router-private-opened-link = 我已和你开了我们的私聊（{ $link }），并在那里给你发了消息：接受它的邀请，然后在那里输入。
