#!/usr/bin/env bash
# The one test command (README, "Tests"; .ci/run runs exactly this). Installs the servers
# the end-to-end tests start (InspIRCd, Atheme, Synapse, PostgreSQL) and the browser the site's test
# drives (Chromium): idempotent, and cached, so only the first run on a machine installs
# anything; then runs every test of the workspace. Arguments
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
    set -- --workspace
fi
exec cargo test --locked "$@"
