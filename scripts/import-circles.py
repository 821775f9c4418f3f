#!/usr/bin/env python3
"""Issue 32's measure of layering: the file-level import graph of daemon/src (tests and comments left out): prints every circle
(strongly connected set of files that import each other through any chain).
An arrow A -> B exists when A names a path (use or inline) resolving into file B via crate::, super:: or self::.
A parent's `mod child;` declaration is not an arrow. Usage: python3 scripts/import-circles.py [ROOT] [-v] (-v lists the arrows)"""
import os, re, sys
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from daemon_source import code_lines, is_test_file
root = sys.argv[1] if len(sys.argv) > 1 and not sys.argv[1].startswith('-') else '.'
verbose = '-v' in sys.argv
src = os.path.join(root, 'daemon/src')
mods = {}  # module path tuple -> file
for d, _, fs in os.walk(src):
    for f in fs:
        if not f.endswith('.rs'): continue
        rel = os.path.relpath(os.path.join(d, f), src)[:-3].split('/')
        if rel[-1] in ('mod',): rel = rel[:-1]
        if rel == ['lib'] or rel == ['main']: key = ()
        else: key = tuple(rel)
        if rel == ['main']: continue
        mods[key] = os.path.join(d, f)
def strip_tests(text):
    return '\n'.join(code for _, code in code_lines(text))
def expand_use(text):
    # flatten `use a::{b, c::{d}}` groups into paths
    paths = []
    for m in re.finditer(r'\buse\s+([^;]+);', text, re.S):
        body = re.sub(r'\s+', '', m.group(1))
        def rec(prefix, s):
            # split top-level commas
            depth = 0; cur = ''; parts = []
            for ch in s:
                if ch == '{': depth += 1
                if ch == '}': depth -= 1
                if ch == ',' and depth == 0: parts.append(cur); cur = ''
                else: cur += ch
            if cur: parts.append(cur)
            for p in parts:
                if '{' in p:
                    head, rest = p.split('{', 1)
                    rec(prefix + head, rest[:-1])
                else:
                    paths.append(prefix + p)
        rec('', body)
    return paths
graph = {}
for key, f in mods.items():
    if is_test_file(f): continue
    text = strip_tests(open(f).read())
    paths = expand_use(text) + re.findall(r'\b((?:crate|super|self)(?:::\w+)+)', text)
    # module of this file for super resolution
    here = key
    targets = set()
    for p in paths:
        parts = p.split('::')
        if parts[0] == 'crate': base = []; parts = parts[1:]
        elif parts[0] in ('super', 'self'):
            base = list(here)
            while parts and parts[0] in ('super', 'self'):
                if parts[0] == 'super': base = base[:-1]
                parts = parts[1:]
        else: continue
        full = tuple(base + [x.split(' as ')[0] for x in parts])
        # longest prefix that is a file module
        for n in range(len(full), -1, -1):
            if full[:n] in mods:
                t = full[:n]; break
        if t != key and not (len(t) < len(key) and key[:len(t)] == t and t == ()):
            targets.add(t)
    graph[key] = targets
# Tarjan
index = {}; low = {}; stack = []; on = set(); sccs = []; c = [0]
sys.setrecursionlimit(10000)
def strong(v):
    index[v] = low[v] = c[0]; c[0] += 1; stack.append(v); on.add(v)
    for w in graph.get(v, ()):
        if w not in graph: continue
        if w not in index: strong(w); low[v] = min(low[v], low[w])
        elif w in on: low[v] = min(low[v], index[w])
    if low[v] == index[v]:
        comp = []
        while True:
            w = stack.pop(); on.discard(w); comp.append(w)
            if w == v: break
        sccs.append(comp)
for v in graph:
    if v not in index: strong(v)
circles = [s for s in sccs if len(s) > 1]
name = lambda k: '/'.join(k) or 'lib'
for s in sorted(circles, key=len, reverse=True):
    print(f'circle of {len(s)} files: ' + ', '.join(sorted(name(k) for k in s)))
    if verbose:
        ss = set(s)
        for a in sorted(s):
            for b in sorted(graph[a] & ss): print(f'    {name(a)} -> {name(b)}')
print(f'{len(circles)} circles, {sum(len(s) for s in circles)} files in them, {len(graph)} files')
