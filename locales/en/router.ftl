### What the router itself answers: refusals of commands it cannot route, names it
### cannot resolve, and the dice key announcements of a table (daemon/src/router/).
### Ids start with the file's name.

router-unknown-command = Unknown command `!{ $word }`.
router-no-table = You are not playing at any table. Join one in its room (`!join`, or accept a `!duel`).
router-several-tables = You play at several tables ({ $tables }); send this command in the table's room instead.
router-table-in-room = { $game } in { $room }
router-dice-commitment = Dice commitment: `{ $commitment }` (the SHA-256 of this table's secret dice key, revealed when the table ends or takes a new key; RULES T-10).
router-dice-new-commitment = New dice commitment: `{ $commitment }` (the SHA-256 of this table's secret dice key, revealed when the table ends or takes a new key; RULES T-10).
router-dice-revealed = Dice key revealed: `{ $key }` (its SHA-256 is `{ $commitment }`, the commitment announced before these draws): anyone can now check every draw.
# With the site's address known: the first 12 hex digits, the whole on the table's page.
router-dice-commitment-short = Dice commitment: `{ $short }…` (SHA-256 of the table's secret dice key; whole at { $page }; RULES T-10).
router-dice-new-commitment-short = New dice commitment: `{ $short }…` (SHA-256 of the table's new secret dice key; whole at { $page }; RULES T-10).
router-dice-revealed-short = Dice key revealed: `{ $short }…`, matching commitment `{ $commitment }…`: anyone can now check every draw (whole key at { $page }; RULES T-10).
# A Matrix player with no private chat with the bot: one was opened (unencrypted unless the
# config asks) so the bot could write to them privately; said where they last asked.
router-private-opened = I've opened a private chat with you and sent you a message there: accept its invitation to read it.
# The same, with a link to the chat (Matrix: a matrix.to link to the direct room).
router-private-opened-link = I've opened our direct chat ({ $link }) and written to you there: accept its invitation, then type there.
