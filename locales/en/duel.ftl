### The Duel (RULES Game 2): announcements, private notes, refusals.
### English: these must read exactly as CONTRACT.md and the transcripts have them.
### `{" "}` keeps a space Fluent would otherwise trim at a message's start or end.

-token-list = `surge` `focus` `overspeed` `counter` (pre-conditioning), `water` `fire` `thunder` `wind` `earth` `void` (also 水 火 雷 风 土 虚无), `end` (harmonize)

## Words
duel-element-water = Water
duel-element-fire = Fire
duel-element-thunder = Thunder
duel-element-wind = Wind
duel-element-earth = Earth
duel-element-void = Void
duel-token-surge = Power Surge
duel-token-focus = Focused Casting
duel-token-overspeed = Overspeed
duel-token-counter = Full Counter
duel-token-end = End
duel-nothing = nothing
duel-minutes = { $minutes } min
duel-seconds = { $seconds } s
duel-track-even = even (0)
duel-track-toward = { $points } toward { $player }
duel-seal = { $player }'s first { $positions } element position(s) may not be { $elements }
duel-seals-more = { $first }; { $rest }
duel-seals = { $seals }.

## The table opens; a round's steps
duel-opened = ⚔ Duel! { $first } ({ $first-wizard }) vs { $second } ({ $second-wizard }). The track starts at 0; push it to 30 on your side to win (RULES D-1). Round 1 begins: { $whisper ->
    [msg] send your spell to me privately, e.g. `/msg { $bot } !cast surge fire wind end`
    [direct] send your spell in our direct chat (I've written to each of you there), e.g. `!cast surge fire wind end`
   *[privately] send your spell to me privately, e.g. `!cast surge fire wind end`
} — tokens are placed one per step and revealed together; a step waits at most { $wait }. `!help cast` lists the tokens, `!status` shows the duel.
duel-opened-private = ⚔ Your Duel against { $opponent } has begun; you play { $wizard }. Send your spell here, e.g. `!cast surge fire wind end`: nobody else sees it until both spells are revealed step by step. `!help cast` lists the tokens.
duel-queued-complete = Queued. Your spell for round { $round }: { $tokens }. Your tokens are placed one per step and revealed with your opponent's.
duel-queued-open = Queued. Your spell for round { $round }: { $tokens }. Add more with `!cast …` and finish with `end`.
duel-queue = Your queued tokens (only you see this): { $tokens }.
duel-step = Round { $round }, step { $step }: { $placed }
duel-steps = Round { $round }, steps { $first }–{ $last }: { $placed }
duel-spell-complete = (spell complete)
duel-timed-out = {" "}(timed out, RULES D-9)
duel-check-passed = {" "}(concentration: rolled { $roll }, needs { $need }+ ✓)
duel-check-failed = {" "}(concentration: rolled { $roll }, needed { $need }+ ✗ — the element is discarded but spent, and the spell ends)
duel-dropped-interrupted = Your concentration broke and your spell ended; these queued tokens were dropped: { $tokens }.
duel-dropped-timed-out = The step timed out; these queued tokens were dropped: { $tokens }.

## Settlement
duel-settles = Round { $round } settles.
duel-spell-line = { $player }: { $tokens }{ $interrupted } → { $outcome }.
duel-interrupted = {" "}(interrupted)
duel-outcome-countered = countered by { $opponent }'s Full Counter: counts as not cast, power 0 (RULES D-7)
duel-counter-succeeds = Full Counter succeeds (RULES D-7);{" "}
duel-counter-fails-level = Full Counter fails: level { $counter } is below { $opponent }'s { $target } (RULES D-7);{" "}
duel-counter-fails-opposite = Full Counter fails: at position { $position } { $mine } is not opposite { $opponent }'s { $theirs } (RULES D-6);{" "}
duel-counter-fails-missing = Full Counter fails: at position { $position } it has no element against { $opponent }'s { $theirs } (RULES D-6);{" "}
duel-removal-element = { $element } at position { $position }
duel-removal-position = at position { $position }
duel-removals = { $remover }'s { $count ->
    [one] Void removes
   *[other] Voids remove
} { $owner }'s { $removed } (RULES D-11);{" "}
duel-outcome-level = level { $level }: base { $base }
duel-outcome-doubled = {" "}×2 (Full Counter at equal level)
duel-outcome-surge = {" "}+ surge { $boost }
duel-outcome-explosion = {" "}+ explosion { $explosion }
duel-outcome-favour = {" "}+ favour { $favour }
duel-outcome-power = {" "}= power { $power }
duel-outcome-attribute = ; attribute { $elements }
duel-track-moves = Track moves { $points } toward { $player } ({ $first } { $first-power } − { $second } { $second-power }); now { $track }
duel-track-still = Track moves not at all ({ $first } { $first-power } − { $second } { $second-power }); now { $track }
duel-track-line = { $moves }.{ $seals }
duel-seals-next = {" "}Seals next round (RULES D-10): { $seals }
duel-no-seals-next = {" "}No seals next round.
duel-compact-spell = { $player }{ $interrupted } → { $outcome }
duel-compact-settles = Round { $round } settles: { $spells }. { $moves }.

## The next round
# A deadline: ISO 8601 in UTC.
duel-when = { $date }T{ $time }Z
duel-round-begins = Round { $round } begins: { $first }, { $second }, { $whisper ->
    [msg] send your spell with `/msg { $bot } !cast …`
    [direct] send your spell in our direct chat (`!cast …`)
   *[privately] send your spell to me privately (`!cast …`)
}; each step waits at most { $wait }.
duel-round-begins-compact = Round { $round } begins: { $whisper ->
    [msg] send your spell with `/msg { $bot } !cast …`
    [direct] send your spell in our direct chat (`!cast …`)
   *[privately] send your spell to me privately (`!cast …`)
}; each step waits at most { $wait }.{ $seals }
duel-round-seals = {" "}Seals (RULES D-10): { $seals }

## The end
duel-over = 🏁 The duel is over: { $reason }. { $result } Start another with `!duel <player> [wizard]`.
duel-over-track = the track reached { $track } (RULES D-1)
duel-over-pool = { $player }'s pool is empty (RULES D-2); the track is { $track }
duel-over-pools = { $first }'s and { $second }'s pool is empty (RULES D-2); the track is { $track }
duel-over-conceded = { $player } conceded
duel-over-abandoned = neither wizard cast anything this round, so the duel is abandoned; the track is { $track }
duel-over-stopped = it was stopped; the track is { $track }
duel-no-winner = There is no winner.
duel-wins = 🏆 { $player } wins!
duel-draw = It is a draw.
duel-stopped = 🛑 { $player } stopped the Duel; no winner (the track was { $track }). Start another with `!duel <player> [wizard]`.

## Status
duel-result-stopped = stopped, no winner
duel-result-winner = winner { $player }
duel-result-draw = a draw
duel-result-unfinished = not finished
duel-status-head = Duel: { $first } ({ $first-wizard }) vs { $second } ({ $second-wizard }). { $state }Track: { $track } (30 wins).
duel-status-finished = Finished: { $result }.{" "}
duel-status-round = Round { $round }, step { $step }.{" "}
duel-status-pools = Pools: { $pools }.
duel-status-seals = Seals this round (RULES D-10): { $seals }
duel-status-so-far = This round so far: { $placed }{ $waits }
duel-status-complete = {" "}(complete)
duel-status-waits = . Step { $step } waits for { $players } (times out at { $deadline }).

## Wizards
duel-wizards = Wizards: { $wizards }{ $ended ->
    [yes] {" "}
   *[no] .{" "}
}Choose with `!duel <player> <wizard>` or `!accept <wizard>`.
duel-wizard-house = {" "}(house)
duel-wizard-no-favours = , no favours
duel-wizard-favours = , favours
duel-wizard-name = { $name }

## Refusals
duel-did-you-mean = {" "}Did you mean `{ $word }`?
duel-error-unknown-command = `{ $word }` is not a Duel command; Duel commands are `!cast`, `!status`, `!concede` and `!stop`.
duel-error-public-cast = Don't reveal your spell in the room! Send it here instead, `!cast …` (`!help cast` lists the tokens; spells stay hidden until both wizards have placed their tokens).
duel-error-no-tokens = `!cast` needs at least one token, e.g. `!cast surge fire wind end`. Tokens: { -token-list }.
duel-error-unknown-token = `{ $word }` is not a spell token.{ $suggestion } Tokens: { -token-list }.
duel-error-unread = { $message }
duel-error-not-a-player = You are not playing in this duel ({ $first } vs { $second }), and this room holds one table: challenge someone in another room with `!duel <player>`, or wait for this duel to end (`!status` shows it).
duel-error-may-not-stop = Only room operators, game masters and bot admins can stop a Duel; a player who wants out can `!concede` (the opponent wins).
duel-error-over = This duel is over ({ $result }); start a new one with `!duel <player>`.
duel-error-missing-preconditioning = A spell starts with its pre-conditioning, but `{ $token }` would come first (RULES Duel: exactly one pre-conditioning, then elements). Begin with `surge`, `focus`, `overspeed` or `counter`, e.g. `!cast surge { $token }`.
duel-error-second-preconditioning = A spell has exactly one pre-conditioning (RULES Duel); this one already has `{ $first }`, so `{ $second }` cannot be added. Queue elements or `end` instead.
duel-error-overspeed-needs-element = `overspeed` places its marker together with the first element, so `end` cannot follow it directly. Queue an element after it, e.g. `!cast overspeed fire end`.
duel-error-conflict = `{ $element }` cannot directly follow `{ $before }` (RULES D-3: an element never directly follows one of its circle neighbours, and Void never follows Void). After `{ $before }` evoke { $allowed }, or `end`.
duel-error-sealed = `{ $element }` is sealed for the first { $positions } element position(s) of your spell this round (RULES D-10: sealed { $sealed-words }), and it would be element number { $number }. Evoke another element there.
duel-error-pool-empty = Your pool has no `{ $element }` left for this (RULES D-4: { $in-pool } in your pool, { $queued } already queued). Evoke another element or `end`; `!status` shows your pool.
duel-error-after-end = Your spell already ends with `end`, so `{ $extra }` cannot follow it. Your next spell opens after this round settles.
duel-error-spell-complete = Your spell this round is complete ({ $why ->
    [interrupted] your concentration broke
   *[ended] it ended with `end`
}); wait for the round to settle, then cast the next one.
duel-error-seats = A Duel is played by exactly two wizards, not { $count }: challenge one player with `!duel <player> [wizard]`.
duel-error-same-player = { $player } cannot duel themselves: challenge another player with `!duel <player>`.
duel-error-unknown-wizard = There is no wizard `{ $name }`.{ $suggestion } Wizards: { $known }; `!wizards` shows their pools.

## A challenge to a Duel (`!duel`), in the Duel's own words where the lobby's would not do (`challenge_words`)
duel-challenge = { $challenger } challenges { $opponent } to a Duel! { $opponent }: type `!accept [wizard]` or `!decline` (`!wizards` lists the wizards).
# { $choice } is the challenger's wizard.
duel-challenge-as = { $challenger } challenges { $opponent } to a Duel as { $choice }! { $opponent }: type `!accept [wizard]` or `!decline` (`!wizards` lists the wizards).
duel-challenge-declined = { $player } declines the Duel with { $other }.
duel-challenge-self = You cannot duel yourself: type `!duel <player>` with another player's name.

## Help (`!help`): exactly what the commands' declarations say (core/src/games/duel/command.rs)
# The game's name, as `!new` takes it.
duel-name = duel
duel-summary = two wizards cast element spells in hidden steps and push a shared victory track to 30
duel-help-cast = Said to me privately: queues your spell's tokens for this round, one placed per step (`!cast surge fire wind end`): one pre-conditioning (surge focus overspeed counter), then elements (water fire thunder wind earth void), then end. Order: on the circle water–fire–thunder–wind–earth, an element may not directly follow a neighbour (after fire: fire, wind, earth or void), nor void follow void (RULES D-3).
duel-help-status = Shows the round, the step, the victory track, both pools and the seals; privately, also your own queued spell.
duel-help-concede = Gives up the duel: your opponent wins.
duel-help-stop = Room operators, game masters and bot admins: ends the duel with no winner (a player gives up with `!concede`).
duel-help-challenge = Challenges a player to a Duel in this room.
duel-help-wizards = Lists the Duel wizards and their element pools.

## Rules at hand (`!rules D-10`, the site's `/rules/duel`): RULES.md's fixed points, short (core/src/games/duel/rules.rs)
duel-rule-d1 = A wizard wins when the victory track reaches 30 on their side.
duel-rule-d2 = If after a round's settlement either pool is empty, the duel ends: the wizard the track favours wins; at exactly 0 it is a draw.
duel-rule-d3 = The elements form a circle: Water → Fire → Thunder → Wind → Earth → Water. An element conflicts with its two neighbours and may not directly follow either; Void conflicts only with itself (never two Voids in a row).
duel-rule-d4 = Each element you evoke is taken from your pool and stays spent even if it is later removed or discarded; an element your pool lacks cannot be evoked.
duel-rule-d5 = Focused Casting makes this spell's concentration checks use the focused sequence: minimum d6 rolls 3, 3, 2, 2, 2 by default.
duel-rule-d6 = Opposite elements (for Full Counter) are two base elements that conflict, i.e. neighbours on the circle; Void is opposite to nothing.
duel-rule-d7 = Full Counter is checked on the spells as cast, before settlement: with your level at least the opponent's and your element opposite theirs at every position, their spell counts as not cast; at equal levels your base power doubles.
duel-rule-d8 = Concentration checks need minimum d6 rolls 4, 4, 3, 2, 2 (first check, second, …); past the end of the sequence the last value repeats.
duel-rule-d9 = A wizard who places no token before the step times out is treated as placing `end` (at step 0, Power Surge); the timeout is announced.
duel-rule-d10 = A run of k ≥ 2 identical base elements seals its two neighbours on the circle: the opponent's next spell may not evoke a sealed element in its first P positions, P = Σ(k − 1). E.g. Fire Fire: no Water or Thunder as the first element.
duel-rule-d11 = Where one spell has Void, the other spell's token at that position is removed (two Voids remove each other); a removed token leaves a gap, so the tokens on either side are not consecutive.
duel-rule-d12 = Explosion: split the spell at every Void, gap or element equal to the one before; each piece of length L ≥ 3 adds L² power. E.g. Fire Wind Water Thunder: 16 + 16 = 32.
duel-rule-d13 = Wizards are data: a name, an element pool and favoured attributes that add power to spells with them; the default Apprentice has 8 of each base element and 4 Void. `!wizards` lists them.

## The facts the spectator site shows first about a Duel table.
duel-fact-track = Track
duel-fact-winner = Winner
duel-fact-round = Round
duel-fact-cast = has cast
duel-fact-not-cast = not cast yet

## `!stats` and `!top` (the game's record words, `record_words`).
duel-record = {" "}Duel: rating { $rating } ± { $deviation } after { $games ->
    [one] { $games } duel
   *[other] { $games } duels
} ({ $won } won, { $lost } lost{ $drawn }); favourite wizard { $choice }; longest winning streak { $streak }.
duel-top-none = Nobody has a Duel rating yet: a player is rated when a Duel ends. Challenge someone with `!duel <player>`.
duel-top = Duel ratings (Glicko-2, { $rated } rated): { $entries }.
duel-top-entry = { $place }. { $player } { $rating } ± { $deviation } ({ $won }–{ $lost }{ $drawn })
duel-top-few = No player has { $min } rated Duels yet: `!top` lists a player once they have. `!stats` shows everyone's.
# The heading of its table on the site's leaderboard.
duel-board = Duel (Glicko-2)
