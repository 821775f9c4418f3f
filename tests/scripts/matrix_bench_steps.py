"""Splits each spellbridge exchange of the Matrix benchmark into its steps.

Run the bench with the trace and the daemon's debug log kept, then this on the two:

    SPELLBRIDGE_BENCH_TRACE=/tmp/trace.txt SPELLBRIDGE_BENCH_KEEP_LOGS=/tmp/logs \\
    SPELLBRIDGE_BENCH_RUST_LOG=debug,hyper=info,reqwest=info,rustls=info,matrix_sdk_crypto=info,matrix_sdk_base::store=info \\
        cargo bench -p spellbridge --bench matrix
    python3 tests/scripts/matrix_bench_steps.py /tmp/trace.txt /tmp/logs/spellbridge-<pid>.log

(the log of the first daemon, the one measured; the second is the 100-room start). For
every measured `!status` it finds, in the log, the first of each step's events after the
user's `PUT` returned and before the answer arrived, and prints each step's p50 per pattern:
the user's PUT, the bot's sync returning it, matrix-sdk processing the sync, the hand-over
reaching the daemon, the daemon starting its PUT, that PUT, and the answer reaching the user.
The debug log slows the daemon a little; compare steps, not totals, with a run without it.
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


def main(trace_path, log_path):
    events = log_events(log_path)
    steps = {}
    for line in open(trace_path, encoding="utf-8"):
        what, _round, pattern, start, put_end, arrived = line.split()
        if what != "spellbridge":
            continue
        start, put_end, arrived = int(start), int(put_end), int(arrived)
        first = {}
        for at, kind in events:
            if put_end <= at <= arrived:
                first.setdefault(kind, at)
        if len(first) < len(EVENTS):
            continue
        for name, begin, end in [
            ("user's PUT", start, put_end),
            ("-> bot's sync returns", put_end, first["sync_resp"]),
            ("matrix-sdk processes it", first["sync_resp"], first["processed"]),
            ("-> the daemon has it", first["processed"], first["router_in"]),
            ("-> bot's PUT starts", first["router_in"], first["put_start"]),
            ("bot's PUT", first["put_start"], first["put_end"]),
            ("-> user's sync returns it", first["put_end"], arrived),
            ("total", start, arrived),
        ]:
            steps.setdefault((pattern, name), []).append((end - begin) / 1000)
    for (pattern, name), times in steps.items():
        print(f"{pattern:13} {name:26} p50 {statistics.median(times):6.2f} ms  (n={len(times)})")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: matrix_bench_steps.py TRACE_FILE DAEMON_LOG")
    main(sys.argv[1], sys.argv[2])
