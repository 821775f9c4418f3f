#!/usr/bin/env bash
# Installs Atheme IRC services (Debian package `atheme-services`, 7.2) for the SASL and
# account tests; does nothing when /usr/bin/atheme-services is already there. The tests
# start their own services linked to their own InspIRCd (tests/harness/atheme.rs).
set -euo pipefail

BINARY=/usr/bin/atheme-services

if [ -x "$BINARY" ]; then
    echo "install-atheme: already installed: $("$BINARY" -v 2>/dev/null | head -n 1)"
    exit 0
fi

fail() {
    echo "install-atheme: error: $*" >&2
    echo "install-atheme: the SASL tests need $BINARY (Debian package atheme-services)." >&2
    exit 1
}

command -v apt-get >/dev/null 2>&1 || fail "apt-get not found: install Atheme 7.2 by hand so that $BINARY exists"

SUDO=()
if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null 2>&1 || fail "not root and no sudo: run this script as root"
    SUDO=(sudo)
fi

echo "install-atheme: installing the Debian package atheme-services"
"${SUDO[@]}" apt-get update -qq || fail "apt-get update failed (see above)"
"${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends atheme-services \
    || fail "apt-get install atheme-services failed (see above)"

[ -x "$BINARY" ] || fail "the package installed but $BINARY is missing"
echo "install-atheme: installed: $("$BINARY" -v 2>/dev/null | head -n 1)"
