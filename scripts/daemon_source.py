"""What count-names.py and import-circles.py read of daemon/src: its source files and their
code lines, tests (files tests.rs, *_tests.rs, tests/ folders, #[cfg(test)] items) and
comments left out."""
import os


def is_test_file(path):
    name = os.path.basename(path)
    return name == 'tests.rs' or name.endswith('_tests.rs') or '/tests/' in path


def code_lines(text):
    """(line number, stripped code) for each code line: #[cfg(test)] items skipped by
    their braces, comment and blank lines left out, a trailing comment cut where the line
    holds no string."""
    lines = text.split('\n')
    out = []
    i = 0
    while i < len(lines):
        s = lines[i].strip()
        if s.startswith('#[cfg(test)]'):
            j = i + 1
            while j < len(lines) and lines[j].strip().startswith('#['):
                j += 1
            if j < len(lines) and not lines[j].rstrip().endswith(';'):
                depth = 0
                started = False
                while j < len(lines):
                    depth += lines[j].count('{') - lines[j].count('}')
                    started = started or '{' in lines[j]
                    j += 1
                    if started and depth <= 0:
                        break
                i = j
                continue
            i = j + 1
            continue
        if s and not s.startswith('//'):
            out.append((i + 1, s if '"' in s else s.split('//')[0]))
        i += 1
    return out
