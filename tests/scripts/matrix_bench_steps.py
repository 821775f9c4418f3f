"""Splits each exchange of the Matrix benchmark into its steps.

Run the bench with the trace and the logs kept, then this on them:

    SPELLBRIDGE_BENCH_TRACE=/tmp/trace.txt SPELLBRIDGE_BENCH_KEEP_LOGS=/tmp/logs \\
    SPELLBRIDGE_BENCH_RUST_LOG=debug,hyper=info,reqwest=info,rustls=info,matrix_sdk_crypto=info,matrix_sdk_base::store=info \\
        cargo bench -p spellbridge --bench matrix
    python3 tests/scripts/matrix_bench_steps.py /tmp/trace.txt /tmp/logs/spellbridge-<pid>.log [/tmp/logs/synapse.log]

(the log of the first daemon, the one measured; the second is the 100-room start).

From the daemon's log, for every measured `!status` it finds the first of each step's
events after the user's `PUT` returned and before the answer arrived, and prints each
step's p50 per pattern: the user's PUT, the bot's sync returning it, the hand-over
reaching the daemon, the daemon starting its PUT, that PUT, and the answer reaching the
user; and, apart, when matrix-sdk finished processing the sync (it runs after the answer
is out, for rooms read early). The debug log slows the daemon a little; compare steps,
not totals, with a run without it.

From Synapse's access log (kept with `SPELLBRIDGE_BENCH_KEEP_LOGS`; millisecond times),
for spellbridge, matrix-nio and the round-trip floor's B alike: when the answering
account's sync was done, when its PUT started and how long Synapse took over it, and how
soon after it the user's sync had the answer (all from the end of the user's PUT).
"""

import datetime
import re
import statistics
import sys

EVENTS = {
    "sync_resp": lambda l: "method=GET" in l and "/sync" in l and "Got response" in l,
    "processed": lambda l: "Processed a sync response" in l,
    "router_in": lambda l: "message in network" in l,
    "put_start": lambda l: "method=PUT" in l and "Sending request" in l,
    "put_end": lambda l: "method=PUT" in l and "Got response" in l,
}

ACCESS = re.compile(
    r"(\S+ \S+),(\d+) .*\{@(\w+):\S+\} Processed request: ([\d.]+)sec/.*\"(\w+) (\S+)"
)

# The trace's subjects and the account that answers in each.
ANSWERS = {"spellbridge": "spellbridge", "nio": "niobot", "round-trip": "bob"}


def exchanges(trace_path):
    for line in open(trace_path, encoding="utf-8"):
        what, _round, pattern, start, put_end, arrived = line.split()
        yield what, pattern, int(start), int(put_end), int(arrived)


def log_events(path):
    events = []
    for line in open(path, encoding="utf-8"):
        line = re.sub(r"\x1b\[[0-9;]*m", "", line)
        stamp = re.match(r"(\S+Z)", line)
        if not stamp:
            continue
        at = datetime.datetime.fromisoformat(stamp.group(1).replace("Z", "+00:00")).timestamp() * 1e6
        for kind, matches in EVENTS.items():
            if matches(line):
                events.append((at, kind))
                break
    return events


def daemon_steps(trace_path, log_path):
    events = log_events(log_path)
    steps = {}
    for what, pattern, start, put_end, arrived in exchanges(trace_path):
        if what != "spellbridge":
            continue
        first = {}
        for at, kind in events:
            if put_end <= at <= arrived + 15_000:
                first.setdefault(kind, at)
        if len(first) < len(EVENTS) or first["put_end"] > arrived:
            continue
        for name, begin, end in [
            ("user's PUT", start, put_end),
            ("-> bot's sync returns", put_end, first["sync_resp"]),
            ("-> the daemon has it", first["sync_resp"], first["router_in"]),
            ("-> bot's PUT starts", first["router_in"], first["put_start"]),
            ("bot's PUT", first["put_start"], first["put_end"]),
            ("-> user's sync returns it", first["put_end"], arrived),
            ("total", start, arrived),
            ("(matrix-sdk done, from sync)", first["sync_resp"], first["processed"]),
        ]:
            steps.setdefault((pattern, name), []).append((end - begin) / 1000)
    for (pattern, name), times in steps.items():
        print(f"{pattern:13} {name:29} p50 {statistics.median(times):6.2f} ms  (n={len(times)})")


def synapse_steps(trace_path, log_path):
    requests = []
    for line in open(log_path, encoding="utf-8"):
        m = ACCESS.match(line)
        if not m:
            continue
        stamp = datetime.datetime.strptime(m.group(1), "%Y-%m-%d %H:%M:%S")
        end = stamp.replace(tzinfo=datetime.timezone.utc).timestamp() * 1e6 + int(m.group(2)) * 1000
        kind = "sync" if "/sync" in m.group(6) else m.group(5)
        requests.append((end, m.group(3), kind, float(m.group(4)) * 1e6))
    steps = {}
    for what, pattern, _start, put_end, arrived in exchanges(trace_path):
        account = ANSWERS.get(what)
        if account is None:
            continue
        near = [r for r in requests if put_end - 3000 <= r[0] <= arrived + 3000]
        syncs = [r for r in near if r[1] == account and r[2] == "sync" and r[0] > put_end - 1500]
        puts = [r for r in near if r[1] == account and r[2] == "PUT" and r[0] > put_end]
        if not syncs or not puts:
            continue
        put = puts[0]
        told = [r for r in near if r[1] == "alice" and r[2] == "sync" and r[0] > put[0] - 500]
        found = {
            "answerer's sync done": syncs[0][0] - put_end,
            "its PUT starts": put[0] - put[3] - put_end,
            "its PUT takes": put[3],
        }
        if told:
            found["user told, after the PUT"] = told[0][0] - put[0]
        for name, took in found.items():
            steps.setdefault((what, pattern, name), []).append(took / 1000)
    for (what, pattern, name), times in steps.items():
        print(f"synapse  {what:11} {pattern:13} {name:25} p50 {statistics.median(times):6.2f} ms  (n={len(times)})")


if __name__ == "__main__":
    if len(sys.argv) not in (3, 4):
        sys.exit("usage: matrix_bench_steps.py TRACE_FILE DAEMON_LOG [SYNAPSE_LOG]")
    daemon_steps(sys.argv[1], sys.argv[2])
    if len(sys.argv) == 4:
        synapse_steps(sys.argv[1], sys.argv[3])
