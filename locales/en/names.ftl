### Names typed for players: a name that could mean several players, and a new player's
### name that cannot be read the same way by everyone (daemon/src/names.rs,
### daemon/src/router/names.rs). The name is shown escaped, as typed. Ids start with the
### file's name.

names-ambiguous = { $word } could be { $players }; name them by one of those ids.
names-or = {" or "}
names-refused = { $why }: a player's name must be letters, digits and ordinary punctuation that everyone reads the same way; type their nick as their network shows it, or ask them to speak first so I know them.
names-empty = a player's name cannot be empty
names-too-long = `{ $name }` has { $count } characters, more than the { $max } a player's name may have; type one of at most { $max }
names-control = `{ $name }` has a control character ({ $code })
names-invisible = `{ $name }` has an invisible character ({ $code })
names-bidi = `{ $name }` has a character that reverses the text around it ({ $code })
names-look-alike = `{ $name }` mixes look-alike letters of different scripts (it reads as `{ $looks }`)
names-which = Which { $word }: { $members }? Type the name after “type” to say which.
names-which-member = { $name } (on { $network }, type { $id })
names-logged-out = { $name } is in the room but not logged in to services on { $network }, and only logged-in players play there: ask them to log in (e.g. /msg NickServ IDENTIFY …), then name them again.
names-asking = I am asking { $network } which services account { $name } is logged in to: name them again in a moment.
names-nobody-present = Nobody in this room is called `{ $name }`: name a player by their nick or Matrix id, or by a display name of someone here.
