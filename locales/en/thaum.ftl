### Thaum (RULES Game 1): announcements and refusals.
### English: these must read exactly as CONTRACT.md and the transcripts have them.
### `{" "}` keeps a space Fluent would otherwise trim at a message's start or end.

## Words
thaum-fire = Fire
thaum-water = Water
thaum-earth = Earth
thaum-air = Air
thaum-more = { $first }, { $rest }
thaum-nobody = nobody
thaum-no-players = no players
thaum-not-taken = {" "}({ $count } could not be taken: coins stop at 0, T-9)
thaum-roll = { $player }'s { $thaum } { $step } ({ $before } → { $after })
thaum-rolls-more = { $first }; { $rest }
thaum-standing = { $place }. { $player } { $coins } coins
thaum-defeats = { $attacker } defeats { $defender }
thaum-strength = Strength, attacking row against defending Fire, Water, Earth, Air: { $rows }. { $defeats }.
thaum-ends-at = at { $day } { $date } { $time } UTC
thaum-ends-by-command = when a game master types `!phase next`
thaum-sunday = Sunday
thaum-monday = Monday
thaum-tuesday = Tuesday
thaum-wednesday = Wednesday
thaum-thursday = Thursday
thaum-friday = Friday
thaum-saturday = Saturday

## Events
thaum-opened = { $player } opens a Thaum table and is its game master. Season 1, Phase I begins: { $player } holds 1 Mana; the phase ends { $ends }. Type `!join` to play and `!status` to see where you stand.
thaum-joined = { $player } joins the Thaum table with { $mana } Mana.
thaum-added = { $by } adds { $player } to the Thaum table, with { $mana } Mana.
thaum-gathered = { $player } gathers { $spent } Mana into { $thaum }: { $change }{ $lost }; { $left } Mana left.
thaum-lost-to-cap = {" "}({ $lost } Mana lost to the cap of 10)
thaum-blood-magic = { $player } casts Blood Magic on { $thaum }: { $change }, +{ $granted } Mana ({ $left } now).
thaum-alchemy = { $player } casts Alchemy with { $spent } Mana on { $first } { $first-value } and { $second } { $second-value }: N = { $spent } × { $first-value } × { $second-value } = { $n }. Coins { $coins }. { $first } and { $second } are now 0; { $left } Mana left.
thaum-bending-self = { $caster } bends their own Thaums with { $spent } Mana: attack { $attack } × { $spent }; their Thaums take it, then all become 0; { $left } Mana left.
thaum-bending = { $caster } bends { $defender } with { $spent } Mana: attack { $attack } × { $spent }; { $defender } now has { $after }. { $caster }'s Thaums are now 0; { $left } Mana left.
thaum-summoning = { $caster } summons with { $partner } ({ $spent } Mana): N = { $n }. { $caster }: coins { $caster-coins }; { $partner }: coins { $partner-coins }. Both players' Thaums are now 0; { $caster } has { $left } Mana left.
thaum-tornado = { $caster } casts Tornado on { $target } with { $spent } Mana{ $draws }. { $caster } now has { $caster-thaums }; { $target } has { $target-thaums }.
thaum-tornado-seed = {" "}(dice seed { $seed }): { $rolls }{ $more }
thaum-tornado-nothing = : nothing is drawn
thaum-tornado-more = ; … and { $count } more (all in the history)
thaum-phase-forced = { $player } ends the phase.
thaum-phase-ended = Phase { $roman } of season { $season } ends: Loop Instability { $before } → { $after }.
thaum-loop-ended = Loop Instability is { $limit } or more, so the loop ends and season { $season } closes. Final standings: { $standings }.
thaum-season-began = Season { $season } opens: every player's Mana, Coins and Thaums are back to 0.
thaum-phase-began = Phase { $roman } begins: every player gains 1 Mana; it ends { $ends }.
thaum-instability = { $player } { $how ->
    [set] sets Loop Instability { $before } → { $after }
    [raise] raises Loop Instability from { $before } to { $after }
    [floor] lowers Loop Instability from { $before } to { $after }, as it stops at 0
   *[lower] lowers Loop Instability from { $before } to { $after }
} (at a phase's end, { $limit } or more ends the loop).
thaum-coins-adjusted = { $by } changes { $player }'s coins: { $coins }.
thaum-gm-added = { $by } makes { $player } a game master of this table; the game masters are now { $game-masters }.
thaum-gm-stepped-down = { $player } steps down as a game master of this table; the game masters are now { $game-masters }.
thaum-gm-removed = { $by } removes { $player } as a game master of this table; the game masters are now { $game-masters }.
thaum-gm-list = The game masters here are { $game-masters }. A game master adds one with `!gm add <player>` and removes one with `!gm remove <player>`.
thaum-sheet = { $player }'s sheet: Mana { $mana }, Coins { $coins }; { $thaums }; Blood Magic { $blood-magic ->
    [used] used this phase
   *[ready] ready
}, Tornado { $tornado ->
    [used] used this phase
   *[ready] ready
}. (Season { $season }, Phase { $roman }, Loop Instability { $instability }.)
thaum-summary = Thaum season { $season }, Phase { $roman }, Loop Instability { $instability } (at a phase's end, { $limit } or more ends the loop). Game master: { $game-masters }. Players: { $players }{ $state }{ $strength }
thaum-summary-player = { $player } (Mana { $mana }, Coins { $coins })
thaum-summary-stopped = . The table is stopped.{" "}
thaum-summary-ends = . This phase ends { $ends }.{" "}
thaum-stopped = { $player } stops the Thaum table. Final standings of season { $season }: { $standings }. The room is free for a new table (`!new thaum`).

## Refusals
thaum-did-you-mean = {" "}(did you mean `{ $player }`?)
thaum-spell-summoning = Summoning
thaum-spell-tornado = Tornado
thaum-spell-bending = Bending
thaum-spell-other = This spell
thaum-error-no-opener = A Thaum table needs a player to open it.
thaum-error-private = Thaum actions are posted in the game room, where everyone sees them: type it there. Only `!status` answers privately.
thaum-error-stopped = This Thaum table was stopped: open a new one with `!new thaum`.
thaum-error-not-a-player = You are not playing Thaum here yet: type `!join` first.
thaum-error-already-joined = You already play Thaum here (T-4): type `!status` to see your sheet.
thaum-error-already-playing = This table already has { $player } as a player (T-4): type `!status { $player }` to see their sheet.
thaum-error-bad-name = `{ $typed }` cannot be a player's name: type `!add <player>`, e.g. `{ $example }`.
thaum-error-unknown-player = `{ $typed }` is not a player at this table{ $suggestion }; the players are { $players }: type `!{ $command } { $usage }` with one of those names.
thaum-error-not-game-master = Only a game master can use `!{ $command }`; the game masters here are { $game-masters }.
thaum-error-not-seated = `{ $typed }` is not at this table{ $suggestion }, and only a player at the table can be a game master: seat them first with `!add { $typed }`, then type `!gm add { $typed }`.
thaum-error-already-game-master = The game masters here already include { $player } (they are { $game-masters }).
thaum-error-not-among-game-masters = `{ $typed }` is not a game master here; the game masters are { $game-masters }: type `!gm remove <player>` with one of those names.
thaum-error-last-game-master = A Thaum table always keeps a game master, and { $player } is the only one here: make another player a game master first (`!gm add <player>`), then remove { $player }.
thaum-error-not-enough-mana = You hold { $held } Mana, so you cannot spend { $wanted } (T-9): spend at most { $held }, e.g. `!{ $command } { $held } { $args }`.
thaum-error-blood-magic-used = Blood Magic is once per phase (T-1) and you have cast it in this phase: cast it again when the next phase begins.
thaum-error-tornado-used = Tornado is once per phase (T-1) and you have cast it in this phase: cast it again when the next phase begins.
thaum-error-same-thaum = Alchemy needs two different Thaums, not { $thaum } twice: type e.g. `!alchemy { $mana } { $first } { $second }`.
thaum-error-self-target = { $spell } needs another player, not yourself: type `!{ $command } <mana> <player>` with another player's name.

## Help (`!help`): exactly what the commands' declarations say (core/src/games/thaum/mod.rs)
# The game's name, as `!new` takes it.
thaum-name = thaum
thaum-summary-line = Nomic magic: turn each phase's Mana into Fire, Water, Earth and Air and cast spells for coins
thaum-help-join = Join this Thaum table; you get this phase's 1 Mana (T-4).
thaum-help-gather = Gather Power: spend Mana to raise one Thaum by that much (Thaums stay within -10..10).
thaum-help-blood = Blood Magic, once per phase: lower one Thaum by the amount and gain Mana equal to the actual decrease (T-5).
thaum-help-alchemy = Alchemy: gain Mana × first × second coins (a negative result revokes coins), then both Thaums become 0.
thaum-help-bend = Bending: add Mana × (your Thaums × the strength matrix) to a player's Thaums (you may name yourself), then all yours become 0 (T-6). Fire defeats Air, Water defeats Fire, Earth defeats Water, Air defeats Earth.
thaum-help-summon = Summoning with another player: both gain N = your Thaums × strength matrix × theirs coins (negative revokes); the Mana does not scale N (T-7); then all Thaums of both become 0.
thaum-help-tornado = Tornado on another player, once per phase: for each Mana a random Thaum of you or them moves by ± your current Air (T-8); then your Air becomes 0. The dice seed is published (T-10).
thaum-help-status = Your sheet, another player's, or the whole table: season, phase, Loop Instability, and the strength matrix.
thaum-help-phase = Game master: end this phase now, as the schedule would (T-2).
thaum-help-instability = Game master: set, raise or lower Loop Instability; at a phase's end, 9 or more ends the loop (T-3).
thaum-help-coins = Game master: set, grant or revoke a player's coins (coins stop at 0, T-9).
thaum-help-add = Game master: register a player, who gets this phase's 1 Mana (T-4).
thaum-help-gm = Game master: make a player at the table a game master (`!gm add bob`) or remove one (`!gm remove bob`; a table always keeps one). `!gm` alone lists them, for anyone.
thaum-help-stop = Game master or room operator: end this table and post the final standings; the room can then host another table.

## Rules at hand (`!rules T-3`, the site's `/rules/thaum`): RULES.md's fixed points, short (core/src/games/thaum/rules.rs)
thaum-rule-t1 = Each new phase grants every player 1 Mana and resets the once-per-phase spells (Blood Magic, Tornado). Mana is not lost at a phase's end: it accumulates until the loop ends.
thaum-rule-t2 = By default three phases a week (UTC: Sun–Tue, Wed–Thu, Fri–Sat), numbered from Phase I at a loop's start; a game master can also end a phase with `!phase next`.
thaum-rule-t3 = Loop Instability rises by 1 at each phase's end (a game master may adjust it with `!instability`); when it is then 9 or more, the loop ends: final standings (most coins first), and the next season starts at Phase I with everything at 0.
thaum-rule-t4 = A player joins with `!join` or is registered by a game master (`!add`); joining mid-phase gets that phase's 1 Mana.
thaum-rule-t5 = Blood Magic's amount must be a whole number ≥ 0; it lowers the Thaum and grants Mana equal to the actual decrease.
thaum-rule-t6 = Bending: the attack is your Thaums times the strength matrix (r = Sᵀa); each of the defender's Thaums gains Mana × attack, then all your Thaums become 0 (on yourself: all become 0).
thaum-rule-t7 = Summoning: N = your Thaums × the strength matrix × theirs; both of you gain N coins (a negative N revokes). The Mana spent does not scale N.
thaum-rule-t8 = Tornado: for each Mana a random Thaum of yours or the target's moves by ± your Air, read again at each repetition; afterwards your Air becomes 0.
thaum-rule-t9 = Mana and coins never go below 0: spending more Mana than you hold is refused; revoking more coins than a player holds takes them to 0 and says how many could not be taken.
thaum-rule-t10 = Every draw comes from a recorded seed: a table commits to a secret dice key (its SHA-256) when it opens and reveals the key when it ends (a Thaum table also at each season's end), so anyone can check every draw.

## The facts the spectator site shows first about a Thaum table.
thaum-fact-season = Season
thaum-fact-phase = Phase
thaum-fact-instability = Loop Instability
thaum-fact-players = Players
thaum-fact-mana = Mana
thaum-fact-fire = Fire
thaum-fact-water = Water
thaum-fact-earth = Earth
thaum-fact-air = Air
thaum-fact-coins = Coins

## `!stats` and `!top` (the game's record words, `record_words`).
thaum-record = {" "}Thaum: { $rounds ->
    [one] { $rounds } season
   *[other] { $rounds } seasons
} played, { $won } won{ $best }.
thaum-record-best = {"; "}best standing { $place } of { $of } (table { $table }, season { $round })
thaum-top-none = No Thaum season has ended yet. Open a table with `!new thaum`.
thaum-top-few = No player has { $min } rated Thaum seasons yet: `!top thaum` lists a player once they have. `!stats` shows everyone's.
thaum-top = Thaum standings over { $rated ->
    [one] { $rated } finished season
   *[other] { $rated } finished seasons
} (coins, then Thaums): { $entries }.
thaum-top-entry = { $place }. { $player } { $score } coins, Thaums { $tiebreak } ({ $rounds ->
    [one] { $rounds } season
   *[other] { $rounds } seasons
})
# The heading of its table on the site's leaderboard.
thaum-board = Thaum seasons
