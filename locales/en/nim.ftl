### Nim (core/src/games/nim/RULES.md): announcements, refusals, help and rules.

## Words
nim-name = nim
nim-summary = two players take turns taking 1 to 3 stones from one of three piles; whoever takes the last stone wins
nim-pile-a = a
nim-pile-b = b
nim-pile-c = c
nim-piles = a { $a } · b { $b } · c { $c }

## What happens
nim-opened = 🪨 { $player } opens a game of Nim: piles { $piles }. Someone types `!join` to play; then take turns with `!take <amount> <pile>`, 1 to 3 stones from one pile; whoever takes the last stone wins (RULES N-4).
nim-joined = { $player } joins. { $first } moves first, e.g. `!take 2 b`. Piles: { $piles }.
nim-took = { $player } takes { $amount -> 
    [one] 1 stone
   *[other] { $amount } stones
} from pile { $pile }. Piles: { $piles }. { $next } to move.
nim-took-last = { $player } takes { $amount -> 
    [one] 1 stone
   *[other] { $amount } stones
} from pile { $pile }. Piles: { $piles }.
nim-won = 🏁 { $player } took the last stone and wins; { $loser } loses (RULES N-4). Start another with `!new nim`.
nim-status = Nim: { $first } vs { $second }. Piles: { $piles }. { $next } to move.
nim-status-waiting = Nim: { $player } waits for an opponent to `!join`. Piles: { $piles }.
nim-conceded = 🏳 { $player } concedes; { $winner } wins. Start another with `!new nim`.
nim-closed = { $player } closes the table before anyone joined; no winner.
nim-stopped = 🛑 { $player } stopped the game; no winner. Start another with `!new nim`.

## Refusals
nim-over = This game of Nim is over. Start another with `!new nim`.
nim-already-seated = You are at this table already; wait for an opponent to `!join`.
nim-seats-taken = Both seats are taken ({ $first } and { $second }); watch, or open a table in another room with `!new nim`.
nim-not-seated-yet = You are not playing at this table; type `!join` to take the second seat.
nim-not-seated = You are not playing at this table: { $first } and { $second } are. Watch, or open a table in another room with `!new nim`.
nim-no-opponent = Wait for an opponent to `!join` before you take stones.
nim-not-your-turn = It is { $player }'s turn; wait for their move.
nim-amount = You may take 1 to { $most } stones, not { $amount } (RULES N-3): e.g. `!take 2 b`.
nim-pile-empty = Pile { $pile } is empty; take from a pile that has stones: { $piles }.
nim-pile-short = Pile { $pile } has only { $left -> 
    [one] 1 stone
   *[other] { $left } stones
} left; take at most that many, e.g. `!take { $left } { $pile }`.
nim-may-not-stop = Only a room operator, game master or bot admin may stop the game; to give up, type `!concede`.

## Help
nim-help-join = Takes the second seat at this Nim table; the opener moves first (RULES N-1).
nim-help-take = On your turn: takes 1 to 3 stones from one pile, a, b or c (`!take 2 b`); whoever takes the last stone wins (RULES N-3, N-4).
nim-help-status = Shows the piles and whose turn it is.
nim-help-concede = Gives up the game: your opponent wins.
nim-help-stop = Room operators, game masters and bot admins: ends the game with no winner (a player gives up with `!concede`).

## The grammar's phrases (command::PHRASES)
nim-phrase-needs-amount-pile = an amount and a pile
nim-phrase-missing-pile = the pile is missing
nim-phrase-noun-pile = pile
nim-phrase-list-piles = the piles are a, b and c
nim-phrase-shown-piles = <a|b|c>
nim-phrase-example-take = take 2 b

## Rules at hand
nim-rule-n1 = Two play: whoever opens the table with `!new nim` and the first to `!join` it. The opener moves first; then the players take turns.
nim-rule-n2 = There are three piles, called a, b and c, of 3, 5 and 7 stones.
nim-rule-n3 = On your turn you take 1, 2 or 3 stones from one pile that has that many.
nim-rule-n4 = Whoever takes the last stone wins.
nim-rule-n5 = A player may concede (the other wins); a room operator, game master or bot admin may stop the game (no winner).

## The board picture and the site's facts
nim-board-to-move = { $player } to move
nim-board-waiting = { $player } waits for an opponent
nim-board-won = { $player } took the last stone and won
nim-board-over = The game is over; no winner
nim-board-caption = Nim table { $table }: piles a { $a }, b { $b }, c { $c }; { $standing }.
nim-board-caption-unread = Nim table { $table }.
nim-piles-plain = a { $a } · b { $b } · c { $c }
nim-fact-players = Players
nim-fact-piles = Piles
nim-fact-standing = Now
