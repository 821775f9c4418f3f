#!/usr/bin/env bash
# The one test command (README, "Tests"; .ci/run runs exactly this). Installs the servers
# the end-to-end tests start (InspIRCd, Atheme, Synapse, PostgreSQL) and the browser the site's test
# drives (Chromium): idempotent, and cached, so only the first run on a machine installs
# anything; then builds and checks the example game component (the author's guide) and
# runs every test of the workspace. Arguments
# are passed to `cargo test` (`bash scripts/test.sh -p spellbridge-core`).
set -euo pipefail
cd "$(dirname "$0")/.."

bash tests/scripts/install-inspircd.sh
bash tests/scripts/install-atheme.sh
bash tests/scripts/install-synapse.sh
bash tests/scripts/install-chromium.sh
bash tests/scripts/install-postgres.sh
bash tests/scripts/install-wasm-games.sh
if [ "$#" -eq 0 ]; then
    # The game author's guide (games/nim-wasm/README.md) as written: build the example
    # component from source, then check it (its transcript played; exit 1 on a problem).
    bash games/nim-wasm/build.sh
    cargo run --locked --quiet -p spellbridge -- game check games/nim-wasm/out/nim.wasm
    set -- --workspace
fi
exec cargo test --locked "$@"
