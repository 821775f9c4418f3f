"""Nim as a game component in Python (wit/game.wit), built with componentize-py: the
rules of the built-in Nim (core/src/games/nim/RULES.md) and its texts. The state is
JSON bytes: the piles, the seats, whose turn, the winner."""

import json

from componentize_py_types import Err
from wit_world import exports
from wit_world.imports import types as t

import texts

PILES = ["a", "b", "c"]


def say(id, **args):
    return t.News(t.Audience_Table(), id, [(k, str(v)) for k, v in args.items()])


def refuse(id, **args):
    raise Err(t.Refusal(id, [(k, str(v)) for k, v in args.items()]))


def piles(s):
    return " · ".join(f"{p} {n}" for p, n in zip(PILES, s["piles"]))


def command(name, aliases, args, summary, example, who=t.Who.ANYONE):
    return t.Command(name, aliases, args, who, summary, "nothing after it", example, f"nim-help-{name}")


class Game(exports.Game):
    def describe(self):
        choice = t.ArgKind_Choice([["a", "甲"], ["b", "乙"], ["c", "丙"]])
        return t.Info(
            "nim-py",
            "Nim in Python as a WebAssembly component: take 1 to 3 stones from a pile; the last stone wins",
            t.TableKind_Challenge(2),
            [
                command("join", ["加入"], [], "Takes the second seat; the opener moves first (RULES N-1).", "join"),
                command(
                    "take",
                    ["取", "拿"],
                    [t.Arg(t.ArgKind_Number(), "<amount>", False), t.Arg(choice, "<a|b|c>", False)],
                    "On your turn: takes 1 to 3 stones from one pile, a, b or c (RULES N-3, N-4).",
                    "take 2 b",
                ),
                command("status", ["状态"], [], "Shows the piles and whose turn it is.", "status"),
                command("concede", ["resign", "认输"], [], "Gives up the game: your opponent wins.", "concede"),
                command(
                    "stop",
                    ["停止", "中止"],
                    [],
                    "Room operators, game masters and bot admins: ends the game with no winner.",
                    "stop",
                    t.Who.GAME_MASTER_OR_OPERATOR,
                ),
            ],
        )

    def texts(self, language):
        return texts.ZH if language == t.Language.ZH_CN else texts.EN

    def open(self, players, options, seed, now):
        if not players:
            refuse("nim-no-opponent")
        s = {"piles": [3, 5, 7], "seats": [players[0]], "turn": 0, "winner": None, "over": False}
        return t.Outcome(json.dumps(s).encode(), [say("nim-opened", player=players[0], piles=piles(s))])

    def apply(self, state, move, seed):
        s = read(state)
        news = []
        if s["over"]:
            refuse("nim-over")
        seats = s["seats"]
        if move.command == "join":
            if move.actor in seats:
                refuse("nim-already-seated")
            if len(seats) == 2:
                refuse("nim-seats-taken", first=seats[0], second=seats[1])
            seats.append(move.actor)
            news.append(say("nim-joined", player=move.actor, first=seats[0], piles=piles(s)))
        elif move.command == "take":
            if move.actor not in seats:
                refuse("nim-not-seated")
            if len(seats) < 2:
                refuse("nim-no-opponent")
            if seats[s["turn"]] != move.actor:
                refuse("nim-not-your-turn", player=seats[s["turn"]])
            amount, pile = move.args[0].value, move.args[1].value
            if not 1 <= amount <= 3:
                refuse("nim-amount", most=3, amount=amount)
            if s["piles"][pile] == 0:
                refuse("nim-pile-empty", pile=PILES[pile], piles=piles(s))
            if s["piles"][pile] < amount:
                refuse("nim-pile-short", pile=PILES[pile], left=s["piles"][pile], piles=piles(s))
            s["piles"][pile] -= amount
            if sum(s["piles"]) == 0:
                s["over"], s["winner"] = True, move.actor
                loser = seats[1 - s["turn"]]
                news.append(say("nim-took-last", player=move.actor, amount=amount, pile=PILES[pile], piles=piles(s)))
                news.append(say("nim-won", player=move.actor, loser=loser))
            else:
                s["turn"] = 1 - s["turn"]
                news.append(
                    say("nim-took", player=move.actor, amount=amount, pile=PILES[pile], piles=piles(s), next=seats[s["turn"]])
                )
        elif move.command == "status":
            if len(seats) < 2:
                news.append(say("nim-status-waiting", player=seats[0], piles=piles(s)))
            else:
                news.append(say("nim-status", first=seats[0], second=seats[1], piles=piles(s), next=seats[s["turn"]]))
        elif move.command == "concede":
            if move.actor not in seats or len(seats) < 2:
                refuse("nim-not-seated")
            winner = seats[1 - seats.index(move.actor)]
            s["over"], s["winner"] = True, winner
            news.append(say("nim-conceded", player=move.actor, winner=winner))
        else:
            s["over"] = True
            news.append(say("nim-stopped", player=move.actor))
        return t.Outcome(json.dumps(s).encode(), news)

    def fire_timer(self, state, at, seed):
        return t.Outcome(state, [])

    def check_state(self, state):
        s = read(state)
        return t.Status(s["seats"], [], s["over"], None)

    def public_view(self, state):
        s = read(state)
        return json.dumps({"piles": s["piles"], "seats": s["seats"], "winner": s["winner"]})

    def private_view(self, state, player):
        return self.public_view(state)

    def board(self, public_view, language):
        return None

    def ended(self, state):
        s = read(state)
        if not s["winner"]:
            return None
        loser = [p for p in s["seats"] if p != s["winner"]]
        return t.Ending([t.Place(s["winner"], 1)] + [t.Place(p, 2) for p in loser], False)


def read(state):
    try:
        s = json.loads(state)
        assert isinstance(s["piles"], list) and isinstance(s["seats"], list)
        return s
    except Exception:
        raise Err("not a Nim state")
