#!/usr/bin/env bash
# Builds Nim as a game component (wit/game.wit) from the C sources in this folder, with
# registry packages only: wit-bindgen's C generator and wasm-tools (crates.io), clang-14,
# lld-14 and wasi-libc (Debian). `tests/scripts/install-wasm-games.sh` installs them.
#
#   games/nim-wasm/build.sh [OUT_DIR]     → OUT_DIR/nim.wasm and OUT_DIR/nim.transcript
#                                           (default OUT_DIR: games/nim-wasm/out)
#
# NIM_CFLAGS adds compiler flags: the host's hostile test games build this way, with
# -DHOSTILE_<KIND> choosing their misbehaviour (game.c).
#
# A build that calls wasi-libc's files, clocks, stdio or random (the plain Nim does not)
# imports WASI preview 1; it is wrapped with wasmtime's preview-1 adapter (crates.io, fetched
# by tests/scripts/install-wasm-games.sh to WASI_ADAPTER's default), so the component imports
# WASI 0.2, which the host gives empty.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
out="${1:-$here/out}"
name="${NIM_OUT_NAME:-nim}"
mkdir -p "$out"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

for tool in wit-bindgen wasm-tools clang-14 wasm-ld-14; do
    command -v "$tool" >/dev/null || { echo "build.sh: $tool is missing; run tests/scripts/install-wasm-games.sh" >&2; exit 1; }
done

# NIM_WIT and NIM_WORLD: another world that exports the game (the clock test's imports a clock).
wit="${NIM_WIT:-$root/wit}"
world="${NIM_WORLD:-spellbridge-game}"
base="${world//-/_}"
wit-bindgen c --world "$world" --out-dir "$work" "$wit" >"$work/bindgen.log" 2>&1 || { cat "$work/bindgen.log" >&2; exit 1; }
echo "#include \"$base.h\"" > "$work/world.h"

# A file as a C byte array.
embed() {
    echo "static const char $1[] = {"
    od -An -v -tx1 "$2" | sed 's/\([0-9a-f][0-9a-f]\)/0x\1,/g'
    echo "0};"
}
# The game's texts: the catalogues of the built-in Nim, then the component's own (texts/).
cat "$root/locales/en/nim.ftl" "$here/texts/en.ftl" > "$work/en.ftl"
cat "$root/locales/zh-CN/nim.ftl" "$here/texts/zh-CN.ftl" > "$work/zh-CN.ftl"
{ embed TEXTS_EN "$work/en.ftl"; embed TEXTS_ZH "$work/zh-CN.ftl"; } > "$work/texts.h"

clang-14 --target=wasm32-wasi --sysroot=/usr -mexec-model=reactor -O2 -Wall -Werror \
    -fuse-ld=lld -Wl,--strip-all \
    -I "$work" -I "$here" ${NIM_CFLAGS:-} \
    "$here/game.c" "$here/rules.c" "$here/options.c" \
    "$work/$base.c" "$work/${base}_component_type.o" \
    -o "$work/core.wasm"
adapt=()
if grep -aq wasi_snapshot_preview1 "$work/core.wasm"; then
    adapter="${WASI_ADAPTER:-${XDG_CACHE_HOME:-$HOME/.cache}/spellbridge/wasi_snapshot_preview1.reactor.wasm}"
    [ -f "$adapter" ] || { echo "build.sh: $adapter is missing; run tests/scripts/install-wasm-games.sh" >&2; exit 1; }
    adapt=(--adapt "wasi_snapshot_preview1=$adapter")
fi
wasm-tools component new "$work/core.wasm" "${adapt[@]}" -o "$out/$name.wasm"
# The example transcript `game check` plays, beside the component (NIM_TRANSCRIPT= for none).
transcript="${NIM_TRANSCRIPT-$here/nim.transcript}"
if [ -n "$transcript" ]; then cp "$transcript" "$out/$name.transcript"; fi
echo "$out/$name.wasm"
