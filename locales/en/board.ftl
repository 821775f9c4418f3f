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
