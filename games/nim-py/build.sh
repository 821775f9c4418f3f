#!/usr/bin/env bash
# Builds Nim in Python (app.py) as a game component (wit/game.wit) with componentize-py
# from PyPI (pinned; tests/scripts/install-wasm-games.sh installs it in a venv). The texts
# are the built-in Nim's catalogues, embedded as a Python module.
#
#   games/nim-py/build.sh [OUT_DIR]     → OUT_DIR/nim-py.wasm and nim-py.transcript
#                                         (default OUT_DIR: games/nim-py/out)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
out="${1:-$here/out}"
cpy="${COMPONENTIZE_PY:-${XDG_CACHE_HOME:-$HOME/.cache}/spellbridge/componentize-py/bin/componentize-py}"
[ -x "$cpy" ] || { echo "build.sh: $cpy is missing; run tests/scripts/install-wasm-games.sh" >&2; exit 1; }
mkdir -p "$out"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
python3 - "$root" "$work/texts.py" <<'PY'
import sys
root, out = sys.argv[1], sys.argv[2]
en = open(f"{root}/locales/en/nim.ftl", encoding="utf-8").read()
zh = open(f"{root}/locales/zh-CN/nim.ftl", encoding="utf-8").read()
open(out, "w", encoding="utf-8").write(f"EN = {en!r}\nZH = {zh!r}\n")
PY
cp "$here/app.py" "$work/"
"$cpy" -d "$root/wit" -w spellbridge-game componentize -p "$work" app -o "$out/nim-py.wasm"
# The same example game as the C Nim's, for `game check` to play.
cp "$root/games/nim-wasm/nim.transcript" "$out/nim-py.transcript"
echo "$out/nim-py.wasm"
