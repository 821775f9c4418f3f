#!/usr/bin/env bash
# Installs what games/nim-wasm/build.sh needs to build a game component from C (issue 33):
# Debian's clang-14, lld-14, wasi-libc and the wasm32 compiler-rt builtins, and from
# crates.io wit-bindgen's C generator and wasm-tools' `component new` (pinned versions,
# built without their other generators and commands), and wasmtime's WASI preview-1
# adapter (the crate wasi-preview1-component-adapter-provider, fetched with cargo; its
# reactor adapter is copied to ~/.cache/spellbridge/) for builds that use wasi-libc's I/O;
# and componentize-py from PyPI (pinned, in a venv in ~/.cache/spellbridge/componentize-py)
# for games/nim-py/.
# Does nothing for what is already there, so only the first run on a machine installs
# anything.
set -euo pipefail

WIT_BINDGEN=0.63.0
WASM_TOOLS=1.263.0
WASI_ADAPTER=48.0.8
COMPONENTIZE_PY=0.25.1

fail() {
    echo "install-wasm-games: error: $*" >&2
    exit 1
}

SUDO=()
if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null 2>&1 || fail "not root and no sudo: run this script as root"
    SUDO=(sudo)
fi

if ! command -v clang-14 >/dev/null 2>&1 || ! command -v wasm-ld-14 >/dev/null 2>&1 \
    || [ ! -f /usr/lib/wasm32-wasi/libc.a ] \
    || ! ls /usr/lib/llvm-14/lib/clang/*/lib/wasi/libclang_rt.builtins-wasm32.a >/dev/null 2>&1; then
    command -v apt-get >/dev/null 2>&1 || fail "apt-get not found: install clang-14, lld-14, wasi-libc and libclang-rt-14-dev-wasm32 by hand"
    echo "install-wasm-games: installing clang-14, lld-14, wasi-libc, libclang-rt-14-dev-wasm32"
    "${SUDO[@]}" apt-get update -qq || fail "apt-get update failed (see above)"
    "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
        clang-14 lld-14 wasi-libc libclang-rt-14-dev-wasm32 || fail "apt-get install failed (see above)"
fi

# `cargo install` into ~/.cargo/bin, built in the debug profile (quicker to build; the
# tools only run at build time).
if ! wit-bindgen --version 2>/dev/null | grep -q "$WIT_BINDGEN"; then
    echo "install-wasm-games: building wit-bindgen-cli $WIT_BINDGEN (C generator only)"
    cargo install --locked --debug "wit-bindgen-cli@$WIT_BINDGEN" --no-default-features --features c \
        || fail "cargo install wit-bindgen-cli failed (see above)"
fi
if ! wasm-tools --version 2>/dev/null | grep -q "$WASM_TOOLS"; then
    echo "install-wasm-games: building wasm-tools $WASM_TOOLS (component commands only)"
    cargo install --locked --debug "wasm-tools@$WASM_TOOLS" --no-default-features --features component \
        || fail "cargo install wasm-tools failed (see above)"
fi
adapter="${XDG_CACHE_HOME:-$HOME/.cache}/spellbridge/wasi_snapshot_preview1.reactor.wasm"
if [ ! -f "$adapter.$WASI_ADAPTER" ]; then
    echo "install-wasm-games: fetching wasi-preview1-component-adapter-provider $WASI_ADAPTER"
    fetch="$(mktemp -d)"
    mkdir -p "$fetch/src" && : >"$fetch/src/lib.rs"
    printf '[package]\nname = "fetch-adapter"\nversion = "0.0.0"\nedition = "2021"\n[dependencies]\nwasi-preview1-component-adapter-provider = "=%s"\n' \
        "$WASI_ADAPTER" >"$fetch/Cargo.toml"
    cargo fetch --quiet --manifest-path "$fetch/Cargo.toml" || fail "cargo fetch of the WASI adapter failed (see above)"
    found="$(cargo metadata --quiet --format-version 1 --manifest-path "$fetch/Cargo.toml" \
        | grep -o '"manifest_path":"[^"]*wasi-preview1-component-adapter-provider-[^"]*"' | head -n 1 | cut -d'"' -f4)"
    [ -n "$found" ] || fail "the WASI adapter crate was fetched but not found"
    mkdir -p "$(dirname "$adapter")"
    cp "$(dirname "$found")/artefacts/wasi_snapshot_preview1.reactor.wasm" "$adapter" || fail "no reactor adapter in $found"
    : >"$adapter.$WASI_ADAPTER"
    rm -rf "$fetch"
fi
venv="${XDG_CACHE_HOME:-$HOME/.cache}/spellbridge/componentize-py"
if ! "$venv/bin/componentize-py" --version 2>/dev/null | grep -q "$COMPONENTIZE_PY"; then
    echo "install-wasm-games: installing componentize-py $COMPONENTIZE_PY (PyPI) in $venv"
    python3 -m venv "$venv" || fail "python3 -m venv failed: install python3-venv"
    "$venv/bin/pip" install --quiet "componentize-py==$COMPONENTIZE_PY" || fail "pip install componentize-py failed (see above)"
fi
echo "install-wasm-games: $(wit-bindgen --version), $(wasm-tools --version), $(clang-14 --version | head -n 1), $("$venv/bin/componentize-py" --version)"
