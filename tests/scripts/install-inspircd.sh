#!/usr/bin/env bash
# Installs InspIRCd 3 (Debian package `inspircd`) for the real-server tests; does
# nothing when /usr/sbin/inspircd is already there. The tests start their own servers
# (tests/harness/inspircd.rs); this only installs the binary.
set -euo pipefail

BINARY=/usr/sbin/inspircd

if [ -x "$BINARY" ]; then
    echo "install-inspircd: already installed: $("$BINARY" --version 2>/dev/null | head -n 1)"
    exit 0
fi

fail() {
    echo "install-inspircd: error: $*" >&2
    echo "install-inspircd: the IRC tests need $BINARY (Debian package inspircd, InspIRCd 3)." >&2
    exit 1
}

command -v apt-get >/dev/null 2>&1 || fail "apt-get not found: install InspIRCd 3 by hand so that $BINARY exists"

SUDO=()
if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null 2>&1 || fail "not root and no sudo: run this script as root"
    SUDO=(sudo)
fi

echo "install-inspircd: installing the Debian package inspircd"
"${SUDO[@]}" apt-get update -qq || fail "apt-get update failed (see above)"
"${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends inspircd \
    || fail "apt-get install inspircd failed (see above)"

[ -x "$BINARY" ] || fail "the package installed but $BINARY is missing"
echo "install-inspircd: installed: $("$BINARY" --version 2>/dev/null | head -n 1)"
