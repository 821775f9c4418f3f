# Helpers for the transcript scripts, which drive real chat clients in tmux.
# Source it after setting `sock` (the tmux socket name) and defining
# `show_state` (what to print when an awaited line never shows).

# Bounded waits: `until_true N command…` tries once a second, at most N times.
until_true() {
  local tries=$1
  shift
  for _ in $(seq "$tries"); do
    "$@" && return 0
    sleep 1
  done
  return 1
}

t() { tmux -L "$sock" "$@"; }
type_in() { t send-keys -t "$1" -l "$2" && t send-keys -t "$1" Enter; }
screen() { t capture-pane -p -t "$1"; }
shows() { screen "$1" | grep -qF -- "$2"; }

# `wait_for SESSION TEXT [SECONDS]`: wait until the client's screen shows TEXT, or stop the script.
wait_for() {
  until_true "${3:-30}" shows "$1" "$2" || {
    echo "$(basename "$0"): $1 never showed \"$2\"; its screen:" >&2
    screen "$1" >&2
    show_state >&2
    exit 1
  }
}
