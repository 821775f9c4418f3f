### The component's own words, after the built-in Nim's (locales/en/nim.ftl): build.sh
### ships both. Its private view (the host's `!view`) and the refusals of its options.

## A player's private view
nim-view-your-turn = Your turn at Nim: take 1 to { $most } stones from one pile, e.g. `!take { $amount } { $pile }`. Piles: { $piles }.
nim-view-their-turn = Nim: it is { $player }'s turn; yours comes next. Piles: { $piles }.
nim-view-waiting = Nim: you wait for an opponent to `!join`. Piles: { $piles }.
nim-view-not-playing = You are not playing at this table; type `!join` if a seat is free. Piles: { $piles }.

## The options ([game.options] of its [[game]] section)
nim-option-unknown = This Nim's options name `{ $option }`, which it does not know: its one option is `piles = [3, 5, 7]` (three piles of 1 to 10 stones). A bot admin fixes [game.options] in the config.
nim-option-piles = This Nim's option `{ $given }` is not three piles of 1 to 10 stones: write `piles = [3, 5, 7]` under [game.options] in the config.
