#!/usr/bin/env bash
# Installs Synapse (PyPI `matrix-synapse`, not packaged in Debian 12) into a Python venv
# for the real-server Matrix tests. The venv is cached at a stable path, so a later run
# that finds a complete install of the same version does nothing:
#
#   ${SPELLBRIDGE_SYNAPSE_VENV:-$HOME/.cache/spellbridge/synapse-venv}
#
# The tests start their own homeservers from it (tests/harness/synapse.rs), which looks
# at the same path. Environment:
#   SPELLBRIDGE_SYNAPSE_VENV  where the venv goes (default above)
#   SPELLBRIDGE_SYNAPSE_SPEC  the pip requirement (default: the version the tests were
#                             written against)
#   PYTHON                    the interpreter that creates the venv (default: python3,
#                             3.10 or newer)
set -euo pipefail

VENV="${SPELLBRIDGE_SYNAPSE_VENV:-${HOME:?HOME is not set}/.cache/spellbridge/synapse-venv}"
SPEC="${SPELLBRIDGE_SYNAPSE_SPEC:-matrix-synapse==1.163.2}"
PYTHON="${PYTHON:-python3}"
TOOL=install-synapse
WHAT=Synapse
NEEDED_BY="the Matrix tests"
MIN_PYTHON=3.10
SIZE="about 20 s and 240 MB"

installed_version() {
    "$VENV/bin/python" -c 'import synapse; print(synapse.__version__)' 2>/dev/null
}

# shellcheck source=pip-venv.sh
source "$(dirname "${BASH_SOURCE[0]}")/pip-venv.sh"
pip_venv_install
