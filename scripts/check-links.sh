#!/usr/bin/env bash
# Fails on a broken relative link in the repository's Markdown: every `[text](target)`
# in a tracked *.md file whose target is not a URL (http:, https:, mailto:) or a bare
# `#anchor` must name a file or folder of this repository, relative to the page, and
# must not leave the repository (a clone has nothing beside it). Run by .ci/run.
set -euo pipefail
cd "$(dirname "$0")/.."

git ls-files -z '*.md' | python3 -c '
import os, re, sys
root = os.path.realpath(".")
link = re.compile(r"\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
fence = re.compile(r"^\s*(```|~~~)")
broken = []
for page in sys.stdin.read().split("\0"):
    if not page or page.startswith("vendor/"):
        continue
    inside = False
    for number, line in enumerate(open(page, encoding="utf-8"), 1):
        if fence.match(line):
            inside = not inside
        if inside:
            continue
        line = re.sub(r"`[^`]*`", "", line)
        for target in link.findall(line):
            if re.match(r"^(https?|mailto):", target) or target.startswith("#"):
                continue
            path = target.split("#", 1)[0]
            resolved = os.path.realpath(os.path.join(os.path.dirname(page), path))
            if not (resolved == root or resolved.startswith(root + os.sep)):
                broken.append(f"{page}:{number}: {target} leaves the repository")
            elif not os.path.exists(resolved):
                broken.append(f"{page}:{number}: {target} does not exist")
if broken:
    print("broken links:", *broken, sep="\n  ")
    sys.exit(1)
print("links: every relative link in the Markdown resolves inside the repository")
'
