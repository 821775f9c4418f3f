#!/usr/bin/env bash
# Installs Limnoria (PyPI `limnoria`, the maintained Supybot) into a Python venv for the
# IRC benchmark (`cargo bench -p spellbridge --bench irc`), which runs it beside
# spellbridge against the same InspIRCd. The venv is cached at a stable path, so a
# later run that finds a complete install of the same version does nothing:
#
#   ${SPELLBRIDGE_LIMNORIA_VENV:-$HOME/.cache/spellbridge/limnoria-venv}
#
# The bench looks at the same path and starts `supybot` from it. Environment:
#   SPELLBRIDGE_LIMNORIA_VENV  where the venv goes (default above)
#   SPELLBRIDGE_LIMNORIA_SPEC  the pip requirement (default: the version the bench was
#                              written against)
#   PYTHON                     the interpreter that creates the venv (default: python3,
#                              3.9 or newer)
set -euo pipefail

VENV="${SPELLBRIDGE_LIMNORIA_VENV:-${HOME:?HOME is not set}/.cache/spellbridge/limnoria-venv}"
SPEC="${SPELLBRIDGE_LIMNORIA_SPEC:-limnoria==2026.10.4}"
PYTHON="${PYTHON:-python3}"
TOOL=install-limnoria
WHAT=Limnoria
NEEDED_BY="the IRC benchmark"
MIN_PYTHON=3.9
SIZE="a few seconds"

installed_version() {
    [ -x "$VENV/bin/supybot" ] || return 1
    "$VENV/bin/supybot" --version >/dev/null 2>&1 || return 1
    "$VENV/bin/python" -c 'import supybot.version; print(supybot.version.version)' 2>/dev/null
}

# shellcheck source=pip-venv.sh
source "$(dirname "${BASH_SOURCE[0]}")/pip-venv.sh"
pip_venv_install
