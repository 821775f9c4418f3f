### What the daemon tells a player about their message itself: the command limit
### (daemon/src/limits.rs), a message that could not be saved (daemon/src/engine.rs) and
### a relayed message cut short (daemon/src/relay/lines.rs). Ids start with the file's name.

notice-slow-down = Slow down, please: your commands are arriving faster than { $commands } per { $seconds } s. I skipped the last ones; try again in a few seconds.
notice-relay-too-fast = Slow down, please: I pass on at most { $lines } lines at once from one speaker, then one every { $seconds } s, so your last lines did not reach the other rooms of this bridge. Wait a few seconds and they will again.
notice-not-taken = { $player }: that was not taken, because it could not be saved ({ $reason }). Try again in a moment.
# The $reason of notice-not-taken, by the kind of store failure (daemon/src/store/outage.rs):
# never the database's host, user, port or file.
notice-store-unreachable = the store cannot be reached just now; I will keep trying
notice-store-broke = the connection to the store broke while it was being saved
notice-store-handover = this bot is handing the games over to another one
notice-store-busy = the store is busy
notice-store-full = the store's disk is full
notice-store-failed = the store refused it
notice-more-lines = { $head }… ({ $count ->
    [one] { $count } more line
   *[other] { $count } more lines
})
# IRC, to someone not logged in to services who typed a command (adapters/src/irc/transport.rs).
notice-log-in = spellbridge only takes commands from players logged in to services here: log in (e.g. /msg NickServ IDENTIFY …) and try again.
# Relayed as an action of the one who reacted or deleted (daemon/src/relay/mod.rs):
# `* Bob reacted 👍 to alice's “first words…”`.
notice-reacted = reacted { $key }
notice-reacted-to = reacted { $key } to { $name }: “{ $quoted }”
notice-reacted-to-line = reacted { $key } to { $name }'s “{ $quoted }”
notice-deleted = deleted a message
notice-deleted-own = deleted their message
notice-deleted-by = deleted a message by { $name }
