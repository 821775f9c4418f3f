#!/usr/bin/env bash
# Installs matrix-nio (PyPI `matrix-nio`, without its e2e extra: no libolm) into a Python
# venv for the Matrix benchmark (`cargo bench -p spellbridge --bench matrix`), which runs
# tests/scripts/nio_echo.py from it beside spellbridge against the same Synapse. The venv
# is cached at a stable path, so a later run that finds a complete install of the same
# version does nothing:
#
#   ${SPELLBRIDGE_NIO_VENV:-$HOME/.cache/spellbridge/nio-venv}
#
# The bench looks at the same path and starts `bin/python nio_echo.py` from it.
# Environment:
#   SPELLBRIDGE_NIO_VENV  where the venv goes (default above)
#   SPELLBRIDGE_NIO_SPEC  the pip requirement (default: the version the bench was
#                         written against)
#   PYTHON                the interpreter that creates the venv (default: python3, 3.9
#                         or newer)
set -euo pipefail

VENV="${SPELLBRIDGE_NIO_VENV:-${HOME:?HOME is not set}/.cache/spellbridge/nio-venv}"
SPEC="${SPELLBRIDGE_NIO_SPEC:-matrix-nio==0.26.0}"
PYTHON="${PYTHON:-python3}"
TOOL=install-nio
WHAT=matrix-nio
NEEDED_BY="the Matrix benchmark"
MIN_PYTHON=3.9
SIZE="a few seconds"

installed_version() {
    "$VENV/bin/python" -c 'import importlib.metadata as m, nio; print(m.version("matrix-nio"))' 2>/dev/null
}

# shellcheck source=pip-venv.sh
source "$(dirname "${BASH_SOURCE[0]}")/pip-venv.sh"
pip_venv_install
