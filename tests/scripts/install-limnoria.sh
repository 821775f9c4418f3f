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
# Written last, after an install whose `supybot` runs: a venv without it (an install cut
# short) is installed again.
MARKER="$VENV/.spellbridge-installed"

say() { echo "install-limnoria: $*"; }
fail() {
    echo "install-limnoria: error: $*" >&2
    echo "install-limnoria: the IRC benchmark needs Limnoria in the venv $VENV" >&2
    echo "install-limnoria: (python3 >= 3.9 with the venv module, and access to PyPI)." >&2
    exit 1
}

installed_version() {
    [ -x "$VENV/bin/supybot" ] || return 1
    "$VENV/bin/python" -c 'import supybot.version; print(supybot.version.version)' 2>/dev/null
}

if [ -f "$MARKER" ] && [ "$(cat "$MARKER")" = "$SPEC" ] && version="$(installed_version)"; then
    say "already installed: Limnoria $version in $VENV"
    exit 0
fi

started=$SECONDS
command -v "$PYTHON" >/dev/null 2>&1 || fail "$PYTHON not found: install Python 3.9 or newer, or set PYTHON"
"$PYTHON" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 9) else 1)' \
    || fail "$PYTHON is $("$PYTHON" --version 2>&1); Limnoria needs Python 3.9 or newer (set PYTHON)"

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

version="$(installed_version)" || fail "pip installed $SPEC but $VENV/bin/supybot is missing or 'import supybot' fails"
"$VENV/bin/supybot" --version >/dev/null 2>&1 || fail "$VENV/bin/supybot --version fails"
echo "$SPEC" >"$MARKER"
say "installed: Limnoria $version in $VENV in $((SECONDS - started)) s"
