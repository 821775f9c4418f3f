### Games loaded as WebAssembly components (daemon/wasm/): what the host says itself.

component-failed = The { $game } game failed on this ({ $error }). Nothing changed, and this table is paused: a game master can `!resume` it to try again, or `!stop` it. Every other table goes on.
component-paused = This { $game } table is paused since its game failed ({ $error }): a game master can `!resume` it to try again, or `!stop` it.
component-resumed = { $player } resumes the { $game } table: moves are taken again.
component-help-resume = Game masters: lets a table that was paused when its game failed take moves again (`!stop` ends it instead).
component-resume-not-allowed = Only a game master, room operator or bot admin may `!resume` a table; a player waits for one.
component-help-view = Shows you, privately, what you may see of this table (whose turn, what you may do); asked in a room, the answer still comes privately.
component-view-failed = The { $game } game failed showing your view ({ $error }). Nothing changed, and moves go on.
