### The grammar's refusals: a command whose words could not be read against its
### declaration (core/src/grammar/error.rs, said.rs), for every game and the lobby.
### `backticked` text is what to type. In English each phrase below is the declaration's
### own text (core/src/grammar/said.rs PHRASES; a test checks they agree).

## What was wrong
grammar-missing = `{ $command }` needs { $needs }: { $hint }
grammar-missing-clause = `{ $command }` needs { $needs } ({ $clause }): { $hint }
grammar-extra = `{ $command }` takes { $needs }, but `{ $extra }` is left over: { $hint }
grammar-extra-nothing = `{ $command }` takes nothing after it, but `{ $extra }` is left over: { $hint }
grammar-extra-lobby = `{ $command }` does not take `{ $extra }`: type `{ $usage }`.
grammar-bad-number = `{ $command }`: the { $what } { $error }: { $hint }
grammar-not-one = `{ $command }`: `{ $word }` is not a { $noun }; { $list }: { $hint }
grammar-not-one-guess = `{ $command }`: `{ $word }` is not a { $noun } (did you mean `{ $guess }`?); { $list }: { $hint }
grammar-expected = `{ $command }` takes { $needs }, not `{ $word }`: { $hint }
grammar-not-a-number = `{ $word }` is not a whole number
grammar-negative = `{ $word }` is negative; amounts are 0 or more
grammar-too-large = `{ $word }` is too large (at most { $max })

## What to type
grammar-type = type `{ $usage }`.
grammar-type-just = type just `{ $usage }`.
grammar-type-example = type `{ $usage }`, e.g. `{ $example }`.

## What a command needs
grammar-needs-nothing = nothing after it
grammar-needs-tokens = at least one token
grammar-needs-mana-thaum = a Mana amount and a Thaum
grammar-needs-amount-thaum = an amount and a Thaum
grammar-needs-mana-two-thaums = a Mana amount and two different Thaums
grammar-needs-mana-defender = a Mana amount and a defending player (you may name yourself)
grammar-needs-mana-player = a Mana amount and another player
grammar-needs-at-most-one-player = at most one player
grammar-needs-next = the word `next`
grammar-needs-adjustment = a number: `n` sets it, `+n` adds, `-n` takes away
grammar-needs-player-adjustment = a player and a number: `n` sets, `+n` grants, `-n` revokes
grammar-needs-one-player = one player
grammar-needs-gm = `add <player>`, `remove <player>` or `list`
grammar-needs-at-most-command = at most a command
grammar-needs-game = a game
grammar-needs-challenged = the player you challenge
grammar-needs-at-most-wizard = at most a wizard
grammar-needs-at-most-code = at most a code
grammar-needs-at-most-player = at most a player
grammar-needs-player = the player
grammar-needs-at-most-game = at most a game
grammar-needs-at-most-language = at most a language

## Which argument is missing
grammar-missing-mana = the Mana amount is missing
grammar-missing-player = the player is missing
grammar-missing-number = the number is missing
grammar-missing-thaum = the Thaum is missing
grammar-missing-amount = the amount is missing
grammar-missing-both-thaums = both Thaums are missing
grammar-missing-second-thaum = the second Thaum is missing

## What a bad number is
grammar-what-mana = Mana amount
grammar-what-amount = amount
grammar-what-number = number

## Choices
grammar-noun-thaum = Thaum
grammar-list-thaums = the Thaums are fire, water, earth and air

## The usage lines' arguments
grammar-shown-tokens = <token> [<token> …]
grammar-shown-mana = <mana>
grammar-shown-player = <player>
grammar-shown-adjustment = <n|+n|-n>
grammar-shown-thaums = <fire|water|earth|air>
grammar-shown-amount = <amount>
grammar-shown-thaum = <thaum>
grammar-shown-other-thaum = <other thaum>
grammar-shown-player-or-table = [player|table]
grammar-shown-next = next
grammar-shown-gm = [list | add <player> | remove <player>]
grammar-shown-command = [command]
grammar-shown-game = <game>
grammar-shown-wizard = [wizard]
grammar-shown-code = [code]
grammar-shown-optional-player = [player]
grammar-shown-at-most-game = [game]
grammar-shown-language = [en|zh]

## Examples (without the prefix)
grammar-example-cast = cast surge fire wind end
grammar-example-status = status
grammar-example-concede = concede
grammar-example-stop = stop
grammar-example-join = join
grammar-example-gather = gather 2 fire
grammar-example-blood = blood 3 water
grammar-example-alchemy = alchemy 1 fire air
grammar-example-bend = bend 1 bob
grammar-example-summon = summon 0 bob
grammar-example-tornado = tornado 2 bob
grammar-example-status-player = status bob
grammar-example-phase = phase next
grammar-example-instability = instability +1
grammar-example-coins = coins bob +5
grammar-example-add = add bob
grammar-example-gm = gm add bob

## `!rules`
grammar-needs-at-most-rule = at most a rule id
grammar-shown-rule = [id]
