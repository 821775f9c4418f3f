#!/usr/bin/env bash
# Regenerates the board pictures' font, daemon/src/board/font/NotoSansSC-board.otf: a
# subset of Noto Sans CJK SC Regular (SIL Open Font License 1.1, see OFL.txt beside it)
# holding Latin-1, digits, common punctuation, a few arrows and signs, the Chinese
# element glyphs 水 火 雷 风 土 虚 无 and the Chinese labels' characters. To add glyphs, add them to EXTRA (or a range to
# RANGES), run this script and commit the new font; the board's tests say which glyphs a
# picture needs.
#
# Needs: Debian's fonts-noto-cjk (the source font) and fonttools' pyftsubset (PyPI). As
# root: apt-get install fonts-noto-cjk && pip install 'fonttools==4.68.0'
set -euo pipefail

SOURCE=${SOURCE:-/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc}
# The collection's third font (index 2) is "Noto Sans CJK SC" (Simplified Chinese).
FONT_NUMBER=${FONT_NUMBER:-2}
HERE=$(cd "$(dirname "$0")/.." && pwd)
OUT=${OUT:-$HERE/daemon/src/board/font/NotoSansSC-board.otf}

# Basic Latin, Latin-1, general punctuation (dashes, quotes, bullet, ellipsis, primes),
# arrows, minus, less/greater-or-equal.
RANGES="U+0020-007E,U+00A0-00FF,U+2010-2027,U+2030-203A,U+2190-2195,U+2212,U+2264-2265"
# The box drawn for a glyph the font lacks (daemon/src/board/raster.rs TOFU); the element glyphs (RULES D-1): water, fire, thunder, wind, earth, and void (虚无); then
# every character of the Chinese pictures' labels (locales/zh-CN/board.ftl and the Duel's
# Chinese tokens: daemon/src/board/font.rs LABELS, whose test says when one is missing).
EXTRA="□水火雷风土虚无一三下不专个中主二于五人位偏停元入六决利制前力加协印反发合后向四回土威子季定家对封尚局已币师平度张循打持数斗断施无日时星有期未本术束条桌止段水没法注火点玩环的稳第算素级终结置者胜获虚被调赛超输过还这迸速金阶雷风魔（）："

command -v pyftsubset >/dev/null || { echo "pyftsubset not found: pip install 'fonttools==4.68.0'" >&2; exit 1; }
[ -f "$SOURCE" ] || { echo "$SOURCE not found: apt-get install fonts-noto-cjk" >&2; exit 1; }

pyftsubset "$SOURCE" \
  --font-number="$FONT_NUMBER" \
  --unicodes="$RANGES" \
  --text="$EXTRA" \
  --layout-features='kern' \
  --no-hinting \
  --desubroutinize \
  --name-IDs='0,1,2,3,4,5,6,7,13,14' \
  --drop-tables+='VORG,vhea,vmtx,BASE' \
  --output-file="$OUT"
echo "$OUT: $(wc -c <"$OUT") bytes"
