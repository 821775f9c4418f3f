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
# Written last, after an install that imported Synapse: a venv without it (an install cut
# short) is installed again.
MARKER="$VENV/.spellbridge-installed"

say() { echo "install-synapse: $*"; }
fail() {
    echo "install-synapse: error: $*" >&2
    echo "install-synapse: the Matrix tests need Synapse in the venv $VENV" >&2
    echo "install-synapse: (python3 >= 3.10 with the venv module, and access to PyPI)." >&2
    exit 1
}

installed_version() {
    "$VENV/bin/python" -c 'import synapse; print(synapse.__version__)' 2>/dev/null
}

if [ -f "$MARKER" ] && [ "$(cat "$MARKER")" = "$SPEC" ] && version="$(installed_version)"; then
    say "already installed: Synapse $version in $VENV"
    exit 0
fi

started=$SECONDS
command -v "$PYTHON" >/dev/null 2>&1 || fail "$PYTHON not found: install Python 3.10 or newer, or set PYTHON"
"$PYTHON" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else 1)' \
    || fail "$PYTHON is $("$PYTHON" --version 2>&1); Synapse needs Python 3.10 or newer (set PYTHON)"

rm -f "$MARKER"
if [ ! -x "$VENV/bin/python" ] || ! "$VENV/bin/python" -c 'import sys' >/dev/null 2>&1; then
    say "creating the venv $VENV with $("$PYTHON" --version 2>&1)"
    rm -rf "$VENV"
    mkdir -p "$(dirname "$VENV")"
    "$PYTHON" -m venv "$VENV" \
        || fail "'$PYTHON -m venv $VENV' failed (on Debian: apt-get install python3-venv)"
fi

say "installing $SPEC (about 20 s and 240 MB)"
"$VENV/bin/python" -m pip install --quiet --disable-pip-version-check "$SPEC" \
    || fail "pip install $SPEC failed (see above)"

version="$(installed_version)" || fail "pip installed $SPEC but 'import synapse' fails in $VENV"
echo "$SPEC" >"$MARKER"
say "installed: Synapse $version in $VENV in $((SECONDS - started)) s"
