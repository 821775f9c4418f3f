#!/usr/bin/env bash
# Installs PostgreSQL (Debian packages `postgresql`, 15 on Debian 12) for the tests that
# need a real database (issue 34: the leader lease); does nothing when a server binary is
# already under /usr/lib/postgresql/<version>/bin. The tests make their own throwaway
# clusters (tests/harness/postgres.rs: initdb in a temp dir, run as the package's system
# user `postgres`); this only installs the programs. The package's own cluster service is
# not needed by the tests and is left as the package sets it up.
set -euo pipefail

installed() {
    compgen -G "/usr/lib/postgresql/*/bin/postgres" >/dev/null && getent passwd postgres >/dev/null
}

version() {
    local bin
    bin=$(compgen -G "/usr/lib/postgresql/*/bin/postgres" | sort -V | tail -n 1)
    "$bin" --version
}

if installed; then
    echo "install-postgres: already installed: $(version)"
    exit 0
fi

fail() {
    echo "install-postgres: error: $*" >&2
    echo "install-postgres: the PostgreSQL tests need /usr/lib/postgresql/<version>/bin/postgres and the system user postgres (Debian package postgresql)." >&2
    exit 1
}

command -v apt-get >/dev/null 2>&1 || fail "apt-get not found: install PostgreSQL (15 or newer) by hand"

SUDO=()
if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null 2>&1 || fail "not root and no sudo: run this script as root"
    SUDO=(sudo)
fi

echo "install-postgres: installing the Debian package postgresql"
"${SUDO[@]}" apt-get update -qq || fail "apt-get update failed (see above)"
"${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends postgresql postgresql-client \
    || fail "apt-get install postgresql failed (see above)"

installed || fail "the package installed but no server binary or no user postgres is there"
echo "install-postgres: installed: $(version)"
