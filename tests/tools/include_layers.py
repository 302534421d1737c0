#!/usr/bin/env python3
"""Print the includes that run up user/lib's layer order.

user/lib holds one folder per concern; LAYER... names them bottom first
(the Makefile's LIB_LAYERS).  A file in user/lib/F may include, by name,
headers of include/, of F and of the folders before F; nothing else.
Printed, one line each: an include of a folder above, an include found in
neither include/ nor user/lib (an analysis, CLI or build header), a file
loose in user/lib, a folder missing from the order, and a header name
held twice (the include paths would pick one).  Exit 1 when there is one.
  tests/tools/include_layers.py ROOT LAYER...
"""
import glob
import os
import re
import sys

if len(sys.argv) < 3:
    sys.exit(__doc__.strip())
os.chdir(sys.argv[1])
layers = sys.argv[2:]
rank = {name: i for i, name in enumerate(layers)}
problems = []

where = {}  # header name -> its folder ('include' or a layer)
for f in sorted(glob.glob('include/*.h') + glob.glob('user/lib/**/*.h', recursive=True)):
    name = os.path.basename(f)
    parts = f.split('/')
    place = 'include' if parts[0] == 'include' else '/'.join(parts[2:-1])
    if name in where:
        problems.append('%s: in %s and in %s' % (name, where[name], place))
    where.setdefault(name, place)

for f in sorted(glob.glob('user/lib/**/*', recursive=True)):
    parts = f.split('/')
    if len(parts) == 3:
        if os.path.isfile(f):
            problems.append('%s: loose in user/lib (a file belongs in a folder)' % f)
        elif parts[2] not in rank:
            problems.append('%s: a folder not in the layer order (%s)' % (f, ' '.join(layers)))
        continue
    if not re.search(r'\.[ch]$', f) or parts[2] not in rank:
        continue
    if len(parts) > 4:
        problems.append('%s: nested below user/lib/%s (one level of folders)' % (f, parts[2]))
    here = parts[2]
    with open(f, encoding='utf-8', errors='replace') as fh:
        incs = re.findall(r'^[ \t]*#[ \t]*include[ \t]*"([^"]+)"', fh.read(), re.M)
    for inc in incs:
        there = where.get(os.path.basename(inc))
        if there is None:
            problems.append('%s includes "%s": in neither include/ nor user/lib' % (f, inc))
        elif there != 'include' and there not in rank:
            problems.append('%s includes "%s": of %s, in no layer' % (f, inc, there))
        elif there != 'include' and rank[there] > rank[here]:
            problems.append('%s includes "%s": of %s, above %s' % (f, inc, there, here))

for p in problems:
    print(p)
sys.exit(1 if problems else 0)
