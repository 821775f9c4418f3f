#!/usr/bin/env bash
# Makes tests/transcripts/irssi-game.txt and tests/transcripts/weechat-matrix-game.txt: a
# whole Duel across the bridge as its two players see it, dave in irssi on IRC and alice
# in weechat-matrix on Matrix. It runs the quick start (tests/bin/quickstart.rs: InspIRCd,
# Synapse, the demo accounts, #magic bridged) on free loopback ports, puts a small TLS
# proxy in front of Synapse (weechat-matrix speaks only TLS), opens both clients in a
# private tmux server and plays by typing into them: a challenge by name, the bot's
# direct chat on Matrix, two rounds of spells, the end. What `tmux capture-pane -p`
# shows of the room and of each player's private talk with the bot is kept.
# Needs irssi, weechat, weechat-matrix, python3-matrix-nio, tmux, openssl, InspIRCd and
# Synapse (`apt-get install irssi weechat weechat-matrix python3-matrix-nio tmux openssl`;
# tests/scripts/install-inspircd.sh and install-synapse.sh).
#
#   scripts/game-transcripts.sh     # OUT=dir writes elsewhere
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-$root/tests/transcripts}

for tool in irssi weechat tmux python3 openssl; do
  command -v "$tool" >/dev/null || {
    echo "game-transcripts: $tool is missing; install it with: apt-get install irssi weechat weechat-matrix python3-matrix-nio tmux openssl" >&2
    exit 1
  }
done
[[ -f /usr/share/weechat/python/matrix.py ]] || {
  echo "game-transcripts: weechat-matrix is missing: apt-get install weechat-matrix python3-matrix-nio" >&2
  exit 1
}

(cd "$root" && CARGO_INCREMENTAL=0 cargo build -q --locked -p spellbridge --bin spellbridge -p spellbridge-tests --bin quickstart)
target=$(cd "$root" && cargo metadata --format-version 1 --no-deps | sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')
bin=$target/debug

work=$(mktemp -d)
sock=spellbridge-game-$$
quickstart_pid='' proxy_pid=''
cleanup() {
  tmux -L "$sock" kill-server 2>/dev/null || true
  [[ -n $proxy_pid ]] && kill "$proxy_pid" 2>/dev/null || true
  [[ -n $quickstart_pid ]] && kill -TERM "$quickstart_pid" 2>/dev/null || true
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
irc_port=$(free_port) matrix_port=$(free_port) http_port=$(free_port) tls_port=$(free_port)

show_state() {
  echo "--- irssi's query with the bot, and weechat's screen:"
  type_in irssi "/window goto spellbridge"
  sleep 1
  screen irssi
  screen weechat
  echo "--- the bot's log:"
  tail -30 "$work/quickstart/spellbridge.log"
}
# shellcheck source=scripts/tmux-play.sh
. "$(dirname "$0")/tmux-play.sh"

"$bin/quickstart" --spellbridge "$bin/spellbridge" --dir "$work/quickstart" \
  --irc-port "$irc_port" --matrix-port "$matrix_port" --http-port "$http_port" >"$work/quickstart.out" 2>&1 &
quickstart_pid=$!
running() { grep -q "spellbridge is running" "$work/quickstart.out"; }
until_true 120 running || { echo "the quick start did not come up:" >&2; cat "$work/quickstart.out" >&2; exit 1; }

# weechat-matrix connects only over TLS: a self-signed certificate in front of Synapse.
openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=localhost \
  -keyout "$work/proxy.key" -out "$work/proxy.crt" 2>/dev/null
python3 - "$tls_port" "$matrix_port" "$work/proxy.crt" "$work/proxy.key" >"$work/proxy.log" 2>&1 <<'EOF' &
import asyncio, ssl, sys
listen, upstream, cert, key = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
context.load_cert_chain(cert, key)
async def pipe(reader, writer):
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    finally:
        writer.close()
async def client(reader, writer):
    up_reader, up_writer = await asyncio.open_connection("127.0.0.1", upstream)
    await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer), return_exceptions=True)
async def main():
    server = await asyncio.start_server(client, "127.0.0.1", listen, ssl=context)
    await server.serve_forever()
asyncio.run(main())
EOF
proxy_pid=$!

export LANG=C.UTF-8 LC_ALL=C.UTF-8 TERM=screen-256color
t -f /dev/null new-session -d -s irssi -x 100 -y 60 \
  "irssi --home=$work/irssi --connect=127.0.0.1 --port=$irc_port --nick=dave"
t new-session -d -s weechat -x 100 -y 60 \
  "weechat --dir $work/weechat -r '/set weechat.look.buffer_time_format \"\"; /bar hide buflist; /bar hide nicklist; /python load /usr/share/weechat/python/matrix.py; /matrix server add local 127.0.0.1:$tls_port; /set matrix.server.local.username alice; /set matrix.server.local.password alice-password; /set matrix.server.local.ssl_verify off; /matrix connect local'"

wait_for irssi "Welcome to the"
type_in irssi "/set timestamps off"
type_in irssi "/join #magic"
wait_for irssi "has joined #magic"
# alice's room: weechat-matrix opens a buffer for #magic:localhost once it has synced.
in_room() { type_in weechat "/buffer #magic" && sleep 1 && screen weechat | tail -2 | grep -q "matrix/local"; }
until_true 60 in_room || { echo "weechat-matrix never opened #magic:localhost:" >&2; screen weechat >&2; exit 1; }
answering() { type_in irssi "!games" && sleep 2 && shows irssi "Games:"; }
until_true 15 answering || { echo "the bot never answered:" >&2; tail -20 "$work/quickstart/spellbridge.log" >&2; exit 1; }
type_in irssi "/clear"
type_in weechat "/clear"

# dave challenges alice, who has said nothing yet, by name (issue 31, item 1).
type_in irssi "!duel alice"
wait_for weechat "challenges"
type_in weechat "!accept"
wait_for irssi "Round 1 begins"
# The bot opens a direct chat with alice (item 2) and gives its link in the room: she
# joins it from there.
dm_link() { t capture-pane -p -J -S - -t weechat | grep -oE 'matrix\.to/#/![A-Za-z0-9_:.-]+' | tail -1 | sed 's|matrix.to/#/||' | grep .; }
until_true 30 dm_link >/dev/null || true
dm=$(dm_link)
[[ -n $dm ]] || { echo "game-transcripts: alice was never given a direct chat:" >&2; screen weechat >&2; exit 1; }
type_in weechat "/join $dm"
# weechat-matrix names a direct chat's buffer after the other member; the status bar
# lists it as `N:spellbridge` once it has activity, and shows `] N:spellbridge` when in it.
in_dm() {
  local number
  number=$(screen weechat | tail -2 | grep -oE '[0-9]+:spellbridge' | head -1 | cut -d: -f1)
  [[ -n $number ]] && type_in weechat "/buffer $number" && sleep 1 &&
    screen weechat | tail -2 | grep -qE "\] $number:spellbridge"
}
until_true 30 in_dm || { echo "weechat-matrix never opened the direct chat:" >&2; screen weechat >&2; exit 1; }

# Round 1: dave's Fire Wind Water Thunder with surge against alice's focused Earth run.
type_in irssi "/msg spellbridge !cast surge fire wind water thunder end"
type_in irssi "/window goto #magic"
type_in weechat "!cast focus earth earth earth earth end"
wait_for irssi "Round 2 begins" 60
# Round 2: alice's Earth run sealed Wind and Water for dave's first 3 positions (D-10).
type_in irssi "/msg spellbridge !cast surge fire earth fire earth end"
type_in irssi "/window goto #magic"
type_in weechat "!cast focus earth earth earth earth end"
wait_for irssi "over" 60
sleep 2

mkdir -p "$out"
{
  echo "# irssi $(irssi --version | cut -d' ' -f2), dave on IRC, 100x60 (made by scripts/game-transcripts.sh)"
  echo "## #magic"
  screen irssi
  type_in irssi "/window goto spellbridge"
  sleep 1
  echo "## the query with spellbridge"
  screen irssi
} >"$out/irssi-game.txt"
{
  echo "# WeeChat $(weechat --version) with weechat-matrix, alice on Matrix, 100x60 (made by scripts/game-transcripts.sh)"
  echo "## the direct chat with the bot"
  screen weechat
  type_in weechat "/buffer #magic"
  sleep 1
  echo "## #magic:localhost"
  screen weechat
} >"$out/weechat-matrix-game.txt"
# The empty part of each pane says nothing: trailing spaces go, blank lines are squeezed.
for file in "$out/irssi-game.txt" "$out/weechat-matrix-game.txt"; do
  sed -e 's/[[:space:]]*$//' "$file" | cat -s >"$file.tmp" && mv "$file.tmp" "$file"
done
echo "wrote $out/irssi-game.txt and $out/weechat-matrix-game.txt"
