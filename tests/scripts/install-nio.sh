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
# Written last, after an install that imported nio: a venv without it (an install cut
# short) is installed again.
MARKER="$VENV/.spellbridge-installed"

say() { echo "install-nio: $*"; }
fail() {
    echo "install-nio: error: $*" >&2
    echo "install-nio: the Matrix benchmark needs matrix-nio in the venv $VENV" >&2
    echo "install-nio: (python3 >= 3.9 with the venv module, and access to PyPI)." >&2
    exit 1
}

installed_version() {
    "$VENV/bin/python" -c 'import importlib.metadata as m, nio; print(m.version("matrix-nio"))' 2>/dev/null
}

if [ -f "$MARKER" ] && [ "$(cat "$MARKER")" = "$SPEC" ] && version="$(installed_version)"; then
    say "already installed: matrix-nio $version in $VENV"
    exit 0
fi

started=$SECONDS
command -v "$PYTHON" >/dev/null 2>&1 || fail "$PYTHON not found: install Python 3.9 or newer, or set PYTHON"
"$PYTHON" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 9) else 1)' \
    || fail "$PYTHON is $("$PYTHON" --version 2>&1); matrix-nio needs Python 3.9 or newer (set PYTHON)"

rm -f "$MARKER"
if [ ! -x "$VENV/bin/python" ] || ! "$VENV/bin/python" -c 'import sys' >/dev/null 2>&1; then
    say "creating the venv $VENV with $("$PYTHON" --version 2>&1)"
    rm -rf "$VENV"
    mkdir -p "$(dirname "$VENV")"
    "$PYTHON" -m venv "$VENV" \
        || fail "'$PYTHON -m venv $VENV' failed (on Debian: apt-get install python3-venv)"
fi

say "installing $SPEC (a few seconds)"
"$VENV/bin/python" -m pip install --quiet --disable-pip-version-check "$SPEC" \
    || fail "pip install $SPEC failed (see above)"

version="$(installed_version)" || fail "pip installed $SPEC but 'import nio' fails in $VENV"
echo "$SPEC" >"$MARKER"
say "installed: matrix-nio $version in $VENV in $((SECONDS - started)) s"
