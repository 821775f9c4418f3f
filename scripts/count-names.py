#!/usr/bin/env python3
"""Issue 32's measure of the plugin core: count code lines in daemon/src naming a game (thaum|duel) or a network (irc|matrix).
Tests (files tests.rs, *_tests.rs, dirs tests/, and #[cfg(test)] mod blocks) and comments are left out.
Usage: python3 scripts/count-names.py [ROOT] [-v] (-v lists each line)"""
import os, re, sys
root = sys.argv[1] if len(sys.argv) > 1 and not sys.argv[1].startswith('-') else '.'
verbose = '-v' in sys.argv
games = re.compile(r'thaum|duel', re.I)
nets = re.compile(r'(?<![a-z])irc|matrix', re.I)  # not the irc in circle
tot_g = tot_n = 0
rows = []
for d, _, fs in os.walk(os.path.join(root, 'daemon/src')):
    if '/tests' in d.replace(root, ''): continue
    for f in fs:
        if not f.endswith('.rs') or f == 'tests.rs' or f.endswith('_tests.rs'): continue
        p = os.path.join(d, f)
        lines = open(p).read().split('\n')
        g = n = 0; hits = []
        depth = None; i = 0
        skip_test = False
        brace = 0
        while i < len(lines):
            s = lines[i].strip()
            if s.startswith('#[cfg(test)]'):
                # skip the following item (mod or fn) by braces
                j = i + 1
                while j < len(lines) and lines[j].strip().startswith('#['): j += 1
                if j < len(lines) and not lines[j].rstrip().endswith(';'):
                    b = 0; started = False
                    while j < len(lines):
                        b += lines[j].count('{') - lines[j].count('}')
                        if '{' in lines[j]: started = True
                        j += 1
                        if started and b <= 0: break
                    i = j; continue
                i = j + 1; continue
            if s.startswith('//') or not s:
                i += 1; continue
            code = s.split('//')[0] if '"' not in s else s
            if games.search(code): g += 1; hits.append(('G', i+1, s))
            if nets.search(code): n += 1; hits.append(('N', i+1, s))
            i += 1
        if g or n: rows.append((g, n, os.path.relpath(p, root), hits))
        tot_g += g; tot_n += n
for g, n, p, hits in sorted(rows, reverse=True):
    print(f'{g:4} {n:4} {p}')
    if verbose:
        for k, ln, s in hits: print(f'        {k} {ln}: {s[:110]}')
print(f'total: games {tot_g}, networks {tot_n}')
