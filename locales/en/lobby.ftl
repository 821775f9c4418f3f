### The daemon's lobby: `!help`, `!games`, `!new`, challenges, `!lang` and the
### bot admins' `!ignore` (daemon/src/router/help.rs, mod.rs, challenges.rs,
### language.rs, ignore.rs). `backticked` text is shown as code; the commands in it take
### the configured prefix. Ids start with the file's name.

## `!help` and `!games`
# `!help`: one line per group (the lobby's, then the table's game or every game's).
lobby-help = Commands: { $commands }.
lobby-help-at-table = At this room's { $game } table: { $table }.
lobby-help-game = At a { $game } table: { $table }.
lobby-help-private = { $commands }; privately to the bot: { $private }
lobby-help-masters = { $commands }; for game masters and room operators: { $masters }
lobby-help-explain = `!help <command>` explains one; `!rules` lists the rules.
# One command explained: its usage line, then what it does.
lobby-help-topic = `{ $usage }` — { $summary }
lobby-help-topic-separator = {" | "}
lobby-games = Games: { $games }. Start one with { $ways }.
lobby-games-entry = { $game } — { $summary }
lobby-games-separator = {"; "}
lobby-unknown = Unknown command `{ $command }`. Type `!help` for the list.
lobby-unknown-guess = Unknown command `{ $command }`. Did you mean `{ $guess }`? Type `!help` for the list.
lobby-no-game = There is no game in this room yet. Start one with { $ways }.

## The lobby's commands, as `!help <command>` explains them.
lobby-summary-help = Lists the commands, or explains one.
lobby-summary-games = Lists the games you can play.
lobby-summary-new = Opens a table of that game in this room; you become its game master (`!new thaum`).
lobby-summary-accept = Accepts the challenge you were given.
lobby-summary-decline = Declines a challenge (or withdraws your own).
lobby-summary-withdraw = Withdraws the challenge you made in this room; a game master or room operator clears anyone's (so does `!stop`). A challenge also expires by itself (after ten minutes unless the operator set the game's `challenge_lifetime`).
lobby-summary-link = Links your identities on two networks into one player: `!link` gives a code privately; send `!link <code>` to the bot privately from the other network.
lobby-summary-unlink = Separates the identities you linked.
lobby-summary-ignore = Bot admins: drop a player's commands and chat (told once); alone, lists who is ignored.
lobby-summary-unignore = Bot admins: take an ignored player's commands and chat again.
lobby-summary-board = Shows the picture of this room's table in its Matrix rooms (elsewhere, says where to see it).
lobby-summary-stats = A player's record in each game they played: games, wins, rating and what the game keeps besides (alone: yours).
lobby-summary-top = The ten best: Duel players by rating (`!top duel`, the default) or Thaum players by their seasons' coins (`!top thaum`). Only rated games count, and a player is listed once they have 3: a Duel against a guest (not logged in where the network has accounts) or conceded within a minute of its start, and a Thaum season with one player or won with coins a game master gave, are unrated (`!stats` shows them as such).
lobby-summary-lang = Says which language this room (or, privately, your private messages) is told in; `!lang zh` or `!lang en` changes it (in a room, for its operators and game masters).

## `!new`
# `!new` alone: { $ways } is every game's way to start (the registry's).
lobby-new-which = `!new` needs a game: start one with { $ways }.
lobby-new-private = Open a table in the room where you want to play, not in a private message.
lobby-new-unknown = There is no game called `{ $game }`. Games: { $games }.
lobby-new-unknown-guess = There is no game called `{ $game }`. Did you mean `!new { $guess }`? Games: { $games }.
lobby-new-busy = This room already has a { $game } table; one table per room. Finish it first (its game master types `!stop`; in a Duel, `!concede`), or play in another room.

## Challenges, to any game taken by challenge. The game's own words come from the game
## (daemon/src/router/challenge_words.rs): { $game } is its name, { $accept } how to accept
## with its choice (`!accept [colour]`), { $usage } its challenge command
## (`!duel <player> [wizard]`; in `-self`, with the player only), { $usages } every game's,
## as code. A game may tell `-challenge`, `-challenge-as`, `-declined` and `-challenge-self`
## in sentences of its own (`GamePlugin::challenge_words`: the Duel's are `duel-challenge…`
## in duel.ftl).
lobby-challenge = { $challenger } challenges { $opponent } to a game of { $game }! { $opponent }: type `{ $accept }` or `!decline`.
# { $choice } is what the challenger chose to play with.
lobby-challenge-as = { $challenger } challenges { $opponent } to a game of { $game }, choosing { $choice }! { $opponent }: type `{ $accept }` or `!decline`.
lobby-challenge-private = Challenge in the room where you want to play: `{ $usage }` there.
lobby-challenge-nobody = Nobody here is called `{ $name }`. Challenge someone in this room (or a room bridged with it) by nick, display name or Matrix id: `{ $usage }`.
lobby-challenge-self = You cannot challenge yourself: type `{ $usage }` with another player's name.
lobby-challenge-busy = This room already has a table; one table per room. Finish it first, or challenge in another room.
lobby-challenge-pending = { $challenger } has already challenged { $opponent } here; wait for `!accept` or `!decline`.
lobby-accept-none = Nobody has challenged you in this room. Challenge someone with { $usages }.
lobby-declined = { $player } declines the game of { $game } with { $other }.
lobby-withdrawn = { $player } withdraws the challenge to { $other }.
lobby-decline-none = There is no challenge for you to decline in this room.
lobby-withdraw-none = There is no challenge to withdraw in this room; { $usages } makes one.
lobby-withdraw-not-yours = Only { $challenger }, who made the challenge, a game master or a room operator can withdraw it; { $opponent } can `!decline` it. It expires by itself { $lifetime } after it was made.
lobby-challenge-cleared = { $player } clears the challenge from { $challenger } to { $opponent }.
lobby-challenge-expired = The challenge from { $challenger } to { $opponent } expired unanswered; { $usages } makes a new one.
# How long a challenge waits: `[duel] challenge_lifetime` in words.
lobby-lifetime = { $unit ->
    [ten-minutes] ten minutes
    [one-minute] one minute
    [one-hour] one hour
    [hours] { $count } hours
    [minutes] { $count } minutes
   *[seconds] { $count } seconds
}

## `!lang`
lobby-lang-room = This room is told in { $language }. Its operators and its table's game masters change it with `!lang zh` or `!lang en`; said to me privately, it changes your private messages.
lobby-lang-private = Your private messages are told in { $language }. `!lang zh` or `!lang en` here changes them.
lobby-lang-unknown = I do not speak `{ $word }`: type `!lang en` or `!lang zh`.
lobby-lang-not-allowed = Only this room's operators and the game masters of its table choose its language; `!lang zh` said to me privately changes your private messages.
lobby-lang-room-already = This room is already told in { $language }.
lobby-lang-private-already = Your private messages are already told in { $language }.
lobby-lang-room-chosen = This room is now told in { $language }.
lobby-lang-bridge-chosen = This room and the rooms bridged to it are now told in { $language }.
lobby-lang-private-chosen = Your private messages are now told in { $language }.
lobby-language = { $code ->
    [zh-CN] Simplified Chinese (zh-CN)
   *[en] English (en)
}

## `!ignore` and `!unignore` (bot admins)
lobby-ignored-notice = The bot's admins have asked me to ignore you: I will not take your commands or relay what you say. Ask an admin if you think this is a mistake.
lobby-ignore-not-admin = Only the bot's admins (`[permissions] admins` in its config) can ignore players.
lobby-unignore-not-admin = Only the bot's admins (`[permissions] admins` in its config) can take players back.
lobby-ignore-nobody = Nobody is ignored. `!ignore <player>` ignores one.
lobby-ignore-list = Ignored: { $players }. `!unignore <player>` takes one back.
lobby-ignore-self = You cannot ignore yourself.
# { $setting } is `[permissions] admins`, backticks and all.
lobby-ignore-admin = `{ $player }` is a bot admin and cannot be ignored; remove them from { $setting } first.
lobby-ignore-already = `{ $player }` is already ignored.
lobby-ignoring = Ignoring `{ $player }`: their commands and chat are dropped after one notice. `{ $undo }` undoes it.
lobby-unignore-not = `{ $player }` is not ignored; `!ignore` lists who is.
lobby-unignored = No longer ignoring `{ $player }`.

## `!rules` (RULES.md's fixed points, from each game: `GamePlugin::rules`)
lobby-summary-rules = The rule ids of this room's game (RULES.md's fixed points, cited as `(RULES D-10)`); `!rules D-10` says what one rule says.
lobby-rules-game = { $game } rules: { $ids }. `!rules <id>` says one, e.g. `!rules { $example }`.{ $site }
lobby-rules-games = Rules: { $games }. `!rules <id>` says one, e.g. `!rules { $example }`.{ $site }
lobby-rules-of = { $game } { $ids }
lobby-rules-span = { $first } … { $last }
lobby-rules-site = {" "}All of them: { $url }
lobby-rules-rule = { $id } ({ $game }): { $text }
lobby-rules-unknown = There is no rule `{ $typed }`. The rules are { $games }: type e.g. `!rules { $example }`.
