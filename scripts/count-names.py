#!/usr/bin/env python3
"""Issue 32's measure of the plugin core: count code lines in daemon/src naming a game (thaum|duel) or a network (irc|matrix).
Tests (files tests.rs, *_tests.rs, dirs tests/, and #[cfg(test)] mod blocks) and comments are left out.
Usage: python3 scripts/count-names.py [ROOT] [-v] (-v lists each line)"""
import os, re, sys
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from daemon_source import code_lines, is_test_file
root = sys.argv[1] if len(sys.argv) > 1 and not sys.argv[1].startswith('-') else '.'
verbose = '-v' in sys.argv
games = re.compile(r'thaum|duel', re.I)
nets = re.compile(r'(?<![a-z])irc|matrix', re.I)  # not the irc in circle
tot_g = tot_n = 0
rows = []
for d, _, fs in os.walk(os.path.join(root, 'daemon/src')):
    for f in fs:
        p = os.path.join(d, f)
        if not f.endswith('.rs') or is_test_file(os.path.relpath(p, root)): continue
        g = n = 0; hits = []
        for line, code in code_lines(open(p).read()):
            if games.search(code): g += 1; hits.append(('G', line, code))
            if nets.search(code): n += 1; hits.append(('N', line, code))
        if g or n: rows.append((g, n, os.path.relpath(p, root), hits))
        tot_g += g; tot_n += n
for g, n, p, hits in sorted(rows, reverse=True):
    print(f'{g:4} {n:4} {p}')
    if verbose:
        for k, ln, s in hits: print(f'        {k} {ln}: {s[:110]}')
print(f'total: games {tot_g}, networks {tot_n}')
