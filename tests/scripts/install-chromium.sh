#!/usr/bin/env bash
# Installs Chromium (Debian package `chromium`) for the spectator site's browser test
# (daemon/tests/site.rs, driven over the DevTools protocol by tests/harness/chromium.rs);
# does nothing when /usr/bin/chromium is already there. The test starts its own headless
# browser; this only installs it.
set -euo pipefail

BINARY=/usr/bin/chromium

if [ -x "$BINARY" ]; then
    echo "install-chromium: already installed: $("$BINARY" --version 2>/dev/null | head -n 1)"
    exit 0
fi

fail() {
    echo "install-chromium: error: $*" >&2
    echo "install-chromium: the site's browser test needs $BINARY (Debian package chromium)." >&2
    exit 1
}

command -v apt-get >/dev/null 2>&1 || fail "apt-get not found: install Chromium by hand so that $BINARY exists"

SUDO=()
if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null 2>&1 || fail "not root and no sudo: run this script as root"
    SUDO=(sudo)
fi

echo "install-chromium: installing the Debian package chromium"
"${SUDO[@]}" apt-get update -qq || fail "apt-get update failed (see above)"
"${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium \
    || fail "apt-get install chromium failed (see above)"

[ -x "$BINARY" ] || fail "the package installed but $BINARY is missing"
echo "install-chromium: installed: $("$BINARY" --version 2>/dev/null | head -n 1)"
