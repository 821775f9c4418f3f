### `!stats` and `!top`: a player's record and the leaderboards (daemon/src/router/records.rs).
### Ids start with the file's name.

## `!stats [player]`
records-nobody = I know nobody called `{ $name }`. Type `!stats <player>` with a name they used here, or `!top` for the best players.
records-no-games = { $player } has not finished a game yet. Start one with { $ways }.
records-played = { $player } has played { $games ->
    [one] { $games } game
   *[other] { $games } games
} and won { $wins }.{ $duel }{ $thaum }{ $unrated }
records-duel = {" "}Duel: rating { $rating } ± { $deviation } after { $duels ->
    [one] { $duels } duel
   *[other] { $duels } duels
} ({ $won } won, { $lost } lost{ $drawn }); favourite wizard { $wizard }; longest winning streak { $streak }.
records-drawn = {", "}{ $draws } drawn
# Endings that do not count toward `!top` (daemon/src/ratings/unrated.rs).
records-unrated = {" "}Unrated: { $unrated ->
    [one] { $unrated } game
   *[other] { $unrated } games
} (a Duel against a guest or conceded within a minute, a Thaum season alone or won with a game master's coins), not counted toward `!top`.
records-thaum = {" "}Thaum: { $seasons ->
    [one] { $seasons } season
   *[other] { $seasons } seasons
} played, { $won } won{ $best }.
# `place` is the English ordinal (1st, 2nd); `rank` the number.
records-best = {"; "}best standing { $place } of { $of } (table { $table }, season { $season })

## `!top [duel|thaum]`
records-top-duel-none = Nobody has a Duel rating yet: a player is rated when a Duel ends. Challenge someone with `!duel <player>`.
records-top-duel = Duel ratings (Glicko-2, { $rated } rated): { $entries }.
records-top-duel-entry = { $place }. { $player } { $rating } ± { $deviation } ({ $won }–{ $lost }{ $drawn })
records-top-drawn = –{ $draws }
records-top-duel-few = No player has { $min } rated Duels yet: `!top` lists a player once they have. `!stats` shows everyone's.
records-top-thaum-none = No Thaum season has ended yet. Open a table with `!new thaum`.
records-top-thaum-few = No player has { $min } rated Thaum seasons yet: `!top thaum` lists a player once they have. `!stats` shows everyone's.
records-top-thaum = Thaum standings over { $seasons ->
    [one] { $seasons } finished season
   *[other] { $seasons } finished seasons
} (coins, then Thaums): { $entries }.
records-top-thaum-entry = { $place }. { $player } { $coins } coins, Thaums { $thaums } ({ $seasons ->
    [one] { $seasons } season
   *[other] { $seasons } seasons
})
records-top-separator = {"; "}
