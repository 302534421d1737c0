#!/usr/bin/env python3
"""Print the include circles among the userspace modules and shared headers.

A module is a .c file and its .h (user/lib/sys/pins.c + pins.h), with its
private foo_internal.h when it has one; module A depends on B when any of
A's files includes B's header.  A circle is a strongly
connected set of two or more modules.  Exit 1 when there is one.
  tests/tools/include_cycles.py [ROOT]
"""
import glob
import os
import re
import sys

root = sys.argv[1] if len(sys.argv) > 1 else '.'
os.chdir(root)
files = glob.glob('user/**/*.[ch]', recursive=True) + glob.glob('include/*.h')
def module_name(path):
    """foo_internal.h belongs to module foo."""
    stem = os.path.splitext(path)[0]
    return stem[:-len('_internal')] if stem.endswith('_internal') else stem


module_of = {}
for f in sorted(files):
    module_of.setdefault(os.path.basename(os.path.splitext(f)[0]), module_name(f))

deps = {}
for f in files:
    here = module_name(f)
    with open(f, encoding='utf-8', errors='replace') as fh:
        for inc in re.findall(r'#include "([^"]+)\.h"', fh.read()):
            there = module_of.get(os.path.basename(inc))
            if there and there != here:
                deps.setdefault(here, set()).add(there)

# Tarjan's strongly connected components, iteratively.
index, low, stack, on_stack, circles, counter = {}, {}, [], set(), [], 0
for start in sorted(deps):
    if start in index:
        continue
    work = [(start, iter(sorted(deps.get(start, ()))))]
    index[start] = low[start] = counter
    counter += 1
    stack.append(start)
    on_stack.add(start)
    while work:
        v, it = work[-1]
        for w in it:
            if w not in index:
                index[w] = low[w] = counter
                counter += 1
                stack.append(w)
                on_stack.add(w)
                work.append((w, iter(sorted(deps.get(w, ())))))
                break
            if w in on_stack:
                low[v] = min(low[v], index[w])
        else:
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    circles.append(sorted(comp))

for c in circles:
    print('include circle: ' + ' <-> '.join(c))
sys.exit(1 if circles else 0)
