# The text a board picture is sent with, for clients that show no images (Matrix `body`).
board-duel-seat = { $player } ({ $wizard })
board-duel-against = {" against "}
board-duel = The Duel board of table { $table }: { $seated }; the track is at { $track }.
board-duel-toward = The Duel board of table { $table }: { $seated }; the track is at { $track } toward { $leader }.
board-duel-won = { $winner } won.
board-duel-draw = It ended in a draw.
board-thaum-coins = { $player } { $coins }
board-thaum-separator = {", "}
board-thaum = The Thaum board of table { $table }: season { $season }, Phase { $phase }, Loop Instability { $instability }/9; coins: { $coins }.
board-other = The { $game } board of table { $table }.

# The labels drawn in the pictures themselves (daemon/src/board/duel.rs, thaum.rs). Every
# character of the Chinese labels must be in the shipped font (scripts/subset-font.sh).
board-label-duel = Duel
board-label-versus = { $first } vs { $second }
board-label-draw = Finished: a draw
board-label-winner = Finished: { $winner } wins
board-label-stopped = Stopped: no winner
board-label-finished = Finished
board-label-round = Round { $round }
board-label-goal = { $player }'s goal
board-label-even = even (0)
board-label-toward = { $points } toward { $player }
board-label-track = Track: { $where }
board-label-wizard = wizard
board-label-cast = has cast
board-label-not-cast = not cast yet
board-label-no-seal = No seal on the next spell
board-label-sealed = Sealed in { $positions ->
    [one] the first position
   *[other] the first { $positions } positions
}:
board-label-no-round = No round settled yet
board-label-spell = Round { $round }: power { $power }
board-label-level = level { $level }
board-label-countered = countered
board-label-interrupted = interrupted
board-label-separator = {" · "}
board-label-after-even = even
board-label-after = after round { $round }: { $where }
board-label-thaum = Thaum
board-label-season = Season { $season } · Phase { $phase }
board-label-instability = Loop Instability { $instability }/{ $limit }
board-label-table-stopped = The table was stopped
board-label-manual = The phase ends when a game master types !phase next
board-label-phase-ends = Phase { $phase } ends { $when }
board-label-when = { $day } { $date } { $time } UTC
board-label-player = Player
board-label-mana = Mana
board-label-fire = Fire
board-label-water = Water
board-label-earth = Earth
board-label-air = Air
board-label-coins = Coins
board-label-no-players = No players yet: type !join
board-label-day = { $day ->
    [0] Sun
    [1] Mon
    [2] Tue
    [3] Wed
    [4] Thu
    [5] Fri
   *[6] Sat
}

# `!board` where pictures are not shown (daemon/src/router/board.rs).
board-where = The board of this room's table: { $link }
board-where-not = Board pictures are shown in the table's Matrix rooms and on the spectator site; `!status` tells the table here.
