#!/usr/bin/env python3
"""No include edge runs from a lower layer of src/ to a higher one.

Layers, lowest first: policy (with the public headers of plain types), sys, fs, run,
drivers, api (with the public headers of the runner, process, session and fake), then
cli and helpers, which are programs. A file may include its own layer and any lower one.
Usage: include_layers.py SOURCE_DIR
"""
import pathlib
import re
import sys

root = pathlib.Path(sys.argv[1])
order = ["policy", "sys", "fs", "run", "drivers", "api", "cli", "helpers"]
# Public headers that declare the runner and what it returns: the api layer. Every other
# public header is a plain type of the policy layer.
api_headers = {"command_runner.hpp", "process.hpp", "session.hpp", "fake_sandbox.hpp", "sandbox.hpp"}


def layer_of(path: pathlib.Path):
    rel = path.relative_to(root)
    if rel.parts[0] == "include":
        return "api" if rel.name in api_headers else "policy"
    if rel.parts[0] == "src" and len(rel.parts) > 2:
        return rel.parts[1]
    return None


include = re.compile(r'^\s*#\s*include\s+[<"]([^>"]+)[>"]')
bad = []
files = list((root / "src").rglob("*.[ch]pp")) + list((root / "include").rglob("*.hpp"))
for f in files:
    mine = layer_of(f)
    if mine not in order:
        continue
    for n, line in enumerate(f.read_text().splitlines(), 1):
        m = include.match(line)
        if not m:
            continue
        name = m.group(1)
        if name.startswith("sandbox/"):
            target = root / "include" / name
        elif (root / "src" / name).exists():
            target = root / "src" / name
        else:
            continue  # the system's, or a file beside it
        theirs = layer_of(target)
        if theirs in order and order.index(theirs) > order.index(mine):
            bad.append(f"{f.relative_to(root)}:{n}: {mine} includes {name} ({theirs})")
for b in bad:
    print(b)
print(f"{len(files)} files, {len(bad)} edges from a lower layer to a higher one")
sys.exit(1 if bad else 0)
