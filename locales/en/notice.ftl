### What the daemon tells a player about their message itself: the command limit
### (daemon/src/limits.rs), a message that could not be saved (daemon/src/engine.rs) and
### a relayed message cut short (daemon/src/relay/lines.rs). Ids start with the file's name.

notice-slow-down = Slow down, please: your commands are arriving faster than { $commands } per { $seconds } s. I skipped the last ones; try again in a few seconds.
notice-not-taken = { $player }: that was not taken, because it could not be saved ({ $reason }). Try again in a moment.
notice-more-lines = { $head }… ({ $count ->
    [one] { $count } more line
   *[other] { $count } more lines
})
# IRC, to someone not logged in to services who typed a command (adapters/src/irc/transport.rs).
notice-log-in = spellbridge only takes commands from players logged in to services here: log in (e.g. /msg NickServ IDENTIFY …) and try again.
