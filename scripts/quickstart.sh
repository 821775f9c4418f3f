#!/usr/bin/env bash
# The quick start (the README's first command): a local InspIRCd (127.0.0.1:6667) and
# Synapse (http://127.0.0.1:8008) with demo accounts alice and bob, and spellbridge
# bridging IRC #magic and the Matrix room #magic:localhost. It prints how to connect
# with any IRC and any Matrix client; Ctrl-C stops everything.
#
#   bash scripts/quickstart.sh            # run until Ctrl-C
#   bash scripts/quickstart.sh --check    # start, check the bot answers on both, stop
#
# Other options go to the quickstart binary (tests/bin/quickstart.rs): --irc-port N,
# --matrix-port N, --http-port N, --dir DIR. The servers are installed once and cached
# (tests/scripts/install-*.sh); the bot's config, log and games go to target/quickstart/.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { echo "quickstart: $*"; }
fail() {
    echo "quickstart: error: $*" >&2
    exit 1
}

command -v cargo >/dev/null 2>&1 || fail "cargo not found: install Rust (https://rustup.rs)"

bash tests/scripts/install-inspircd.sh || fail "installing InspIRCd failed (see above)"
bash tests/scripts/install-synapse.sh || fail "installing Synapse failed (see above)"

say "building spellbridge and the quick start in release (the first build takes several minutes)"
cargo build --release --quiet -p spellbridge --bin spellbridge -p spellbridge-tests --bin quickstart \
    || fail "cargo build failed (see above)"

# Where cargo put them (CARGO_TARGET_DIR and .cargo/config.toml included).
target="$(cargo metadata --format-version 1 --no-deps | sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')"
[ -n "$target" ] || target=target
[ -x "$target/release/quickstart" ] || fail "the build left no $target/release/quickstart"

exec "$target/release/quickstart" --spellbridge "$target/release/spellbridge" \
    --dir "$target/quickstart" "$@"
