### `!link` and `!unlink`: one player's identities on several networks
### (daemon/src/router/links.rs). Ids start with the file's name.

link-code = Your link code is `{ $code }`. From your identity on the other network, send me privately `{ $command }` within ten minutes; then you play as one player from both networks.
link-sent = I sent you a link code privately.
link-in-room = Send link codes to me privately: anyone here could have used that one, so it no longer works. Type `!link` on your other network for a new code.
link-blocked = You sent { $tries } link codes that did not work within an hour, so I am not reading codes from you for { $minutes } more minutes. Then type `!link` on your other network for a fresh code and send it to me privately from here.
link-seated = You are playing at a table as this identity; link once its game is over (or link first, then sit down).
link-not-valid = That did not link: that code does not work here. A code works once, within ten minutes, sent privately from your identity on the other network (not the one where you typed `!link`). Type `!link` on your other network for a fresh one, then send `!link <code>` to me privately from here.
link-already-linked = That did not link: you are already linked to { $player }; type `!unlink` first.
link-has-links = That did not link: other identities are linked to you; type `!unlink` first.
link-used = Your link code was just used: `{ $identity }` on { $network } now plays as you. If that was not you, type `{ $unlink }` now to separate it.
# { $unlink } is the command with its prefix, backticks and all.
link-linked = Linked: here you now play as { $name }, the same player as on the other network. Type { $unlink } to undo it.
link-none = You have no linked identities; `!link` links one.
link-unlinked = Unlinked { $identities }.
link-identity-on = { $identity } on { $network }
