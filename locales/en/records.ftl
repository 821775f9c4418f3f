### `!stats` and `!top`: a player's record and the leaderboards (daemon/src/router/records.rs).
### Ids start with the file's name.

## `!stats [player]`
records-nobody = I know nobody called `{ $name }`. Type `!stats <player>` with a name they used here, or `!top` for the best players.
records-no-games = { $player } has not finished a game yet. Start one with { $ways }.
records-played = { $player } has played { $games ->
    [one] { $games } game
   *[other] { $games } games
} and won { $wins }.{ $pools }{ $unrated }
records-drawn = {", "}{ $draws } drawn
# Endings that do not count toward `!top` (daemon/src/ratings/unrated.rs).
records-unrated = {" "}Unrated: { $unrated ->
    [one] { $unrated } game
   *[other] { $unrated } games
} (a Duel against a guest or conceded within a minute, a Thaum season alone or won with a game master's coins), not counted toward `!top`.
# A game's own record, for a game that words none of its own (its plugin's `record_words`):
# `game` is its name. A challenge game (rated by Glicko-2):
records-challenge = {" "}{ $game }: rating { $rating } ± { $deviation } after { $games ->
    [one] { $games } game
   *[other] { $games } games
} ({ $won } won, { $lost } lost{ $drawn }){ $favourite }; longest winning streak { $streak }.
records-favourite = {"; "}favourite choice { $choice }
# An open table's game (rounds, ranked by standings):
records-open = {" "}{ $game }: { $rounds ->
    [one] { $rounds } round
   *[other] { $rounds } rounds
} played, { $won } won{ $best }.
# `place` is the English ordinal (1st, 2nd); `rank` the number.
records-open-best = {"; "}best standing { $place } of { $of } (table { $table }, round { $round })

## `!top [game]`
records-top-challenge-none = Nobody has a { $game } rating yet: a player is rated when a game of { $game } ends.
records-top-challenge = { $game } ratings (Glicko-2, { $rated } rated): { $entries }.
records-top-challenge-entry = { $place }. { $player } { $rating } ± { $deviation } ({ $won }–{ $lost }{ $drawn })
records-top-challenge-few = No player has { $min } rated games of { $game } yet: `!top { $word }` lists a player once they have. `!stats` shows everyone's.
records-top-open-none = No round of { $game } has ended yet. Open a table with `!new { $word }`.
records-top-open-few = No player has { $min } rated rounds of { $game } yet: `!top { $word }` lists a player once they have. `!stats` shows everyone's.
records-top-open = { $game } standings over { $rated ->
    [one] { $rated } finished round
   *[other] { $rated } finished rounds
} (score, then tie-break): { $entries }.
records-top-open-entry = { $place }. { $player } { $score } points, tie-break { $tiebreak } ({ $rounds ->
    [one] { $rounds } round
   *[other] { $rounds } rounds
})
records-top-drawn = –{ $draws }
records-top-unknown = `!top`: `{ $word }` is not a leaderboard; the leaderboards are { $games }: type e.g. `!top { $first }`.
records-top-separator = {"; "}

## The site's leaderboard: a game's heading.
records-board-challenge = { $game } (Glicko-2)
records-board-open = { $game }
