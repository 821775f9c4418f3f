#!/usr/bin/env bash
# Makes tests/transcripts/irssi-duel.txt and tests/transcripts/weechat-duel.txt: a Duel
# round as a person sees it in irssi and in WeeChat. It starts an InspIRCd on a free
# loopback port (configured as tests/harness/inspircd.rs configures it) and the bot
# (`spellbridge run`, flood control as on a real network), opens irssi (alice) and
# WeeChat (bob) in a private tmux server, plays the round by typing into them, and
# keeps what `tmux capture-pane -p` shows of the channel and of each player's private
# messages with the bot. Needs irssi, weechat, tmux and inspircd
# (`apt-get install irssi weechat-curses tmux inspircd`).
#
#   scripts/irc-transcripts.sh                      # irssi-duel.txt, weechat-duel.txt
#   CODE_STYLE=monospace scripts/irc-transcripts.sh # irssi-duel-monospace.txt, …
# (OUT=dir writes elsewhere; SPELLBRIDGE_BIN=path uses that binary instead of building.)
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-$root/tests/transcripts}
code_style=${CODE_STYLE:-bold}
suffix=''
[[ $code_style != bold ]] && suffix=-$code_style
inspircd=/usr/sbin/inspircd

for tool in irssi weechat tmux python3 "$inspircd"; do
  command -v "$tool" >/dev/null || {
    echo "irc-transcripts: $tool is missing; install it with: apt-get install irssi weechat-curses tmux inspircd" >&2
    exit 1
  }
done

bin=${SPELLBRIDGE_BIN:-}
if [[ -z $bin ]]; then
  (cd "$root" && CARGO_INCREMENTAL=0 cargo build -q -p spellbridge --bin spellbridge)
  bin=$root/target/debug/spellbridge
fi

work=$(mktemp -d)
sock=spellbridge-transcripts-$$
ircd_pid='' bot_pid=''
cleanup() {
  tmux -L "$sock" kill-server 2>/dev/null || true
  [[ -n $bot_pid ]] && kill "$bot_pid" 2>/dev/null || true
  [[ -n $ircd_pid ]] && kill "$ircd_pid" 2>/dev/null || true
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
mkdir -p "$work"/{conf,data,logs,run}
modules=""
for m in cap ircv3 ircv3_servertime ircv3_msgid ircv3_ctctags ircv3_batch ircv3_capnotify \
  ircv3_accounttag ircv3_chghost ircv3_echomessage ircv3_labeledresponse botmode namesx uhnames monitor; do
  modules+="<module name=\"$m\">"$'\n'
done
cat >"$work/inspircd.conf" <<EOF
<server name="irc.test" description="spellbridge transcripts" network="transcripts$$">
<admin name="spellbridge" nick="admin" email="admin@irc.test">
<bind address="127.0.0.1" port="$port" type="clients">
<connect name="main" allow="*" resolvehostnames="no" useident="no" threshold="10" commandrate="1000" fakelag="yes"
         localmax="100" globalmax="100" maxchans="20" timeout="20" pingfreq="120">
<path configdir="$work/conf" datadir="$work/data" logdir="$work/logs" runtimedir="$work/run" moduledir="/usr/lib/inspircd/modules">
<dns server="127.0.0.1" timeout="1">
<log method="file" type="* -USERINPUT -USEROUTPUT" level="default" target="$work/logs/ircd.log">
$modules
EOF
"$inspircd" --config "$work/inspircd.conf" --nofork --nopid --runasroot >"$work/ircd.out" 2>&1 &
ircd_pid=$!

show_state() {
  echo "--- the bot's log:"
  tail -20 "$work/bot.log"
}
# shellcheck source=scripts/tmux-play.sh
. "$(dirname "$0")/tmux-play.sh"
listening() { (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; }
until_true 30 listening || { echo "InspIRCd did not start:" >&2; cat "$work/ircd.out" >&2; exit 1; }

cat >"$work/spellbridge.toml" <<EOF
prefix = "!"
[store]
path = "games.db"
[[irc]]
name = "test"
server = "127.0.0.1"
port = $port
tls = false
nick = "spellbridge"
channels = ["#magic"]
require_account = false
code_style = "$code_style"
EOF
"$bin" run --config "$work/spellbridge.toml" 2>"$work/bot.log" &
bot_pid=$!

export LANG=C.UTF-8 LC_ALL=C.UTF-8 TERM=screen-256color
t -f /dev/null new-session -d -s irssi -x 100 -y 50 \
  "irssi --home=$work/irssi --connect=127.0.0.1 --port=$port --nick=alice"
t new-session -d -s weechat -x 100 -y 50 \
  "weechat --dir $work/weechat -r '/set weechat.look.buffer_time_format \"\"; /bar hide buflist; /bar hide nicklist; /server add test 127.0.0.1/$port; /set irc.server.test.tls off; /set irc.server.test.nicks bob; /set irc.server.test.autojoin #magic; /connect test'"

wait_for irssi "Welcome to the"
type_in irssi "/set timestamps off"
type_in irssi "/join #magic"
wait_for irssi "has joined #magic"
wait_for weechat "has joined #magic"
# The bot is in the room once it answers there.
answering() { type_in weechat "!games" && sleep 2 && shows weechat "Games:"; }
until_true 15 answering || { echo "the bot never answered:" >&2; tail -20 "$work/bot.log" >&2; exit 1; }
type_in irssi "/clear"
type_in weechat "/clear"

type_in irssi "!duel bob"
wait_for weechat "challenges"
type_in weechat "!accept"
wait_for irssi "Round 1 begins"
type_in irssi "/msg spellbridge !cast surge fire fire wind water end"
type_in irssi "/window goto #magic"
sleep 2
type_in weechat "/msg spellbridge !cast surge water thunder earth fire end"
wait_for weechat "Round 2 begins" 40
wait_for irssi "Round 2 begins" 40
type_in weechat "/buffer #magic"
sleep 1

mkdir -p "$out"
{
  echo "# irssi $(irssi --version | cut -d' ' -f2), alice, 100x50, code_style = \"$code_style\" (made by scripts/irc-transcripts.sh)"
  echo "## #magic"
  screen irssi
  type_in irssi "/window goto spellbridge"
  sleep 1
  echo "## the query with spellbridge"
  screen irssi
} >"$out/irssi-duel$suffix.txt"
{
  echo "# WeeChat $(weechat --version), bob, 100x50, code_style = \"$code_style\" (made by scripts/irc-transcripts.sh)"
  echo "## #magic"
  screen weechat
  type_in weechat "/buffer spellbridge"
  sleep 1
  echo "## the private buffer with spellbridge"
  screen weechat
} >"$out/weechat-duel$suffix.txt"
# The empty part of each pane says nothing: trailing spaces go, blank lines are squeezed.
for file in "$out/irssi-duel$suffix.txt" "$out/weechat-duel$suffix.txt"; do
  sed -e 's/[[:space:]]*$//' "$file" | cat -s >"$file.tmp" && mv "$file.tmp" "$file"
done
echo "wrote $out/irssi-duel$suffix.txt and $out/weechat-duel$suffix.txt"
