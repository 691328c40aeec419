#!/usr/bin/env python3
"""The core's include graph and its cycles.

    python3 tools/include_graph.py                  # print the graphs, the cycles, the layer violations
    python3 tools/include_graph.py --check          # exit 1 if a layer rule breaks
    python3 tools/include_graph.py --check-cycles   # ... or a folder has a cycle

Two graphs over csrc/core, file by file:
- includes: `#include "..."` between the core's .c and .h files;
- uses: a .c file uses another when it calls or reads a symbol defined there (read from the objects
  `make core` leaves in build/, with `nm`; skipped when they are absent).
A cycle is a strongly connected set of two or more .c files in the union of both (a .c depends on the
.c files whose headers it includes only through the symbols it uses; headers are shared, files are
the parts). Layer rules: a layer includes only its own and lower layers' headers (base -> pjrt -> shlo
-> lower -> graph -> runtime), and a header that says it is internal to a folder is included only from
that folder.
"""
import argparse
import os
import re
import subprocess
import sys
from collections import defaultdict

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORE = os.path.join(ROOT, "csrc", "core")
BUILD = os.path.join(ROOT, "build", "csrc", "core")
LAYERS = ["base", "pjrt", "shlo", "lower", "graph", "runtime"]
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
INTERNAL = re.compile(r"internal to (?:core/)?(\w+)", re.I)


def rel(path):
    return os.path.relpath(path, CORE)


def layer_of(relpath):
    top = relpath.split(os.sep)[0]
    return top if top in LAYERS else None


def folder_of(relpath):
    return os.path.dirname(relpath)


def sources():
    out = []
    for d, _dirs, files in os.walk(CORE):
        if os.path.relpath(d, CORE).split(os.sep)[0] == "tests":
            continue
        out += [os.path.join(d, f) for f in files if f.endswith((".c", ".h"))]
    return sorted(out)


def include_edges(files):
    edges = defaultdict(set)
    for path in files:
        text = open(path, encoding="utf-8", errors="replace").read()
        for inc in INCLUDE.findall(text):
            target = os.path.normpath(os.path.join(os.path.dirname(path), inc))
            if os.path.exists(target):
                edges[rel(path)].add(rel(target))
    return edges


def internal_owner(path):
    """What a header says it is internal to, from its first sentence: ("folder", "lower") for
    "Internal to core/lower", ("folder", "pjrt") for "Internal to the pjrt layer", ("file",
    "special_igamma.c") for "Internal to special_igamma.c"; None for a public header."""
    head = open(path, encoding="utf-8", errors="replace").read(1200).split("*/")[0]
    m = re.search(r"\binternal to (?:core/|the )?([\w.]+)", head, re.I)
    if not m:
        return None
    what = m.group(1)
    if what.endswith(".c"):
        return ("file", what)
    if what in LAYERS or os.path.isdir(os.path.join(CORE, what)):
        return ("folder", what)
    return None


def may_include(src, owner):
    kind, what = owner
    if kind == "file":
        return os.path.basename(src) == what
    return what in src.split(os.sep)[:-1]


def symbol_edges(cfiles):
    """c file -> c files whose defined symbols it uses (from build/ objects)."""
    defined, used = {}, defaultdict(set)
    have = False
    for c in cfiles:
        obj = os.path.join(BUILD, c[:-2] + ".o")
        if not os.path.exists(obj):
            continue
        have = True
        out = subprocess.run(["nm", obj], capture_output=True, text=True).stdout
        for line in out.splitlines():
            parts = line.split()
            if len(parts) == 3 and parts[1] in "TDBR":
                defined[parts[2]] = c
            elif len(parts) == 2 and parts[0] == "U":
                used[c].add(parts[1])
    edges = defaultdict(set)
    for c, syms in used.items():
        for s in syms:
            d = defined.get(s)
            if d and d != c:
                edges[c].add(d)
    return edges, have


def sccs(nodes, edges):
    """Tarjan's strongly connected components (iterative)."""
    index, low, on, stack, out, counter = {}, {}, set(), [], [], [0]
    for root in nodes:
        if root in index:
            continue
        work = [(root, iter(sorted(edges.get(root, ()))))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            advanced = False
            for w in it:
                if w not in nodes:
                    continue
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(edges.get(w, ())))))
                    advanced = True
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="exit 1 on a layer violation")
    ap.add_argument("--check-cycles", action="store_true", help="exit 1 on a layer violation or a cycle")
    ap.add_argument("--quiet", action="store_true", help="print only the problems")
    args = ap.parse_args()

    files = sources()
    inc = include_edges(files)
    cfiles = [rel(f) for f in files if f.endswith(".c")]
    uses, have_objs = symbol_edges(cfiles)

    problems, violations = [], []
    # Layer rules.
    for src, targets in sorted(inc.items()):
        ls = layer_of(src)
        for t in sorted(targets):
            lt = layer_of(t)
            if ls and lt and LAYERS.index(lt) > LAYERS.index(ls):
                violations.append(f"upward include: {src} -> {t} ({ls} includes {lt})")
            owner = internal_owner(os.path.join(CORE, t))
            if owner and not may_include(src, owner):
                violations.append(f"internal header crossed: {src} includes {t} (internal to {owner[1]})")

    # Dependencies between .c files: symbols used, plus .c -> .c files whose own header it includes.
    dep = defaultdict(set)
    for c in cfiles:
        dep[c] |= uses.get(c, set())
        for h in inc.get(c, ()):
            twin = h[:-2] + ".c"
            if twin != c and twin in cfiles:
                dep[c].add(twin)

    problems += violations
    by_folder = defaultdict(list)
    for c in cfiles:
        by_folder[folder_of(c)].append(c)
    cycles = []
    for folder, members in sorted(by_folder.items()):
        for comp in sccs(set(members), dep):
            cycles.append((folder, comp))
            problems.append(f"cycle in {folder}/: " + " <-> ".join(os.path.basename(c) for c in comp))

    if not args.quiet:
        print("# includes (csrc/core)")
        for src in sorted(inc):
            print(f"{src} -> {', '.join(sorted(inc[src]))}")
        if have_objs:
            print("\n# uses between .c files (symbols, from build/ objects)")
            for c in sorted(dep):
                if dep[c]:
                    print(f"{c} -> {', '.join(sorted(dep[c]))}")
        else:
            print("\n# uses between .c files: no objects in build/ (run `make core`); includes only")
    print("\n# problems" if not args.quiet else "", end="\n" if not args.quiet else "")
    for p in problems:
        print(p)
    if not problems:
        print("ok: every layer includes only its own and lower layers, internal headers stay in their folders, no folder has a cycle")
    if args.check_cycles and problems:
        return 1
    return 1 if (args.check and violations) else 0


if __name__ == "__main__":
    sys.exit(main())
