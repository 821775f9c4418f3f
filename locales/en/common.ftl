### Words every area shares, and the catalogue's own tests (core/src/locale.rs).
### Variables: `{ $name }`; `backticked` text is shown as code. Ids start with the
### file's name.

# Lists: "alice and bob", "alice, bob and carol".
common-and = { $first } and { $last }
common-comma = { $first }, { $rest }
common-or = { $first } or { $last }

# The catalogue's tests.
common-test-positions = { $count ->
    [one] { $count } position
   *[other] { $count } positions
}
common-test-rich = { $player } typed `{ $word }`.
