### 守护进程就玩家的消息本身告诉玩家的话：命令频率限制（daemon/src/limits.rs）、无法保存的
### 消息（daemon/src/engine.rs）以及被截短的转发消息（daemon/src/relay/lines.rs）。
### 消息 id 以文件名开头。

notice-slow-down = 请慢一点：你的命令来得比每 { $seconds } 秒 { $commands } 条还快。我跳过了最后几条；请过几秒再试。
notice-relay-too-fast = 请慢一点：每位发言者我一次最多转发 { $lines } 行，之后每 { $seconds } 秒一行，所以你最后几行没有送到这个桥接的其他房间。请等几秒再说。
notice-not-taken = { $player }：这条没有被接受，因为它无法保存（{ $reason }）。请稍后再试。
# notice-not-taken 的 $reason，按存储故障的种类（daemon/src/store/outage.rs）：
# 从不包含数据库的主机、用户、端口或文件。
notice-store-unreachable = 暂时连不上存储；我会继续尝试
notice-store-broke = 保存时与存储的连接断了
notice-store-handover = 本机器人正在把游戏交给另一个实例
notice-store-busy = 存储正忙
notice-store-full = 存储所在的磁盘已满
notice-store-failed = 存储拒绝了这次写入
notice-more-lines = { $head }……（还有 { $count } 行）
# IRC：未登录服务账号的人输入了命令（adapters/src/irc/transport.rs）。
notice-log-in = 在这里，spellbridge 只接受已登录服务账号的玩家的命令：请先登录（例如 /msg NickServ IDENTIFY …）再试。
# 作为回应者或删除者的动作转发（daemon/src/relay/mod.rs）：`* Bob 对 alice 的“开头几个字…”回应了 👍`。
notice-reacted = 回应了 { $key }
notice-reacted-to = 对 { $name } 的“{ $quoted }”回应了 { $key }
notice-reacted-to-line = 对 { $name } 的“{ $quoted }”回应了 { $key }
notice-deleted = 删除了一条消息
notice-deleted-own = 删除了自己的一条消息
notice-deleted-by = 删除了 { $name } 的一条消息
