#!/usr/bin/env python3
"""Import circles between the modules of one crate (issue 17's acceptance).

For every crate under crates/ (or the paths given), builds the graph
"module A names module B" from every `crate::b::…` path in A's source (in
`use` lines and in expressions, test modules included; `super::` resolved
against the module's place), collapsing a module's children into it only when
the child is a file of its own folder, and prints every strongly connected
component of more than one module. The crate root (lib.rs) only declares and
re-exports, so it is left out. Exit status 1 when a circle is found.

    python3 scripts/module_cycles.py [crates/tasks crates/algorithms …]
"""
import re
import sys
from pathlib import Path

PATH = re.compile(r"\b(crate|super)((?:::[A-Za-z_][A-Za-z0-9_]*)+)")
GROUP = re.compile(r"\b(crate|super)::\{([^}]*)\}")
REEXPORT = re.compile(r"pub use ([a-z_][a-z0-9_]*)((?:::[a-z_][a-z0-9_]*)*)::(\{[^}]*\}|[A-Za-z_][A-Za-z0-9_]*)")


def reexports(src: Path):
    """Name -> module for the crate root's `pub use module::{Name, …}` lines,
    so that `crate::Task` counts as naming the module `task`."""
    out = {}
    for root in ("lib.rs", "main.rs"):
        f = src / root
        if f.exists():
            for mod, rest, names in REEXPORT.findall(f.read_text()):
                path = (mod,) + tuple(p for p in rest.split("::") if p)
                for n in names.strip("{}").split(","):
                    n = n.strip().split(" as ")[-1].strip()
                    if n:
                        out[n] = path
    return out


def modules(src: Path):
    """Module path (tuple) -> file, for every .rs file under src."""
    out = {}
    for f in src.rglob("*.rs"):
        rel = f.relative_to(src).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] in ("lib", "main"):
            continue
        if parts[-1] == "mod":
            parts = parts[:-1]
        out[tuple(parts)] = f
    return out


def target(mods, here, kind, segs, names):
    """The longest known module named by `kind::segs` written in module `here`."""
    base = () if kind == "crate" else here[:-1]
    if kind == "crate" and segs and segs[0] in names:
        segs = list(names[segs[0]]) + segs[1:]
    path = base + tuple(segs)
    while path and path not in mods:
        path = path[:-1]
    return path


def graph(src: Path):
    mods = modules(src)
    names = reexports(src)
    edges = {m: set() for m in mods}
    for m, f in mods.items():
        text = "\n".join(
            line for line in f.read_text().splitlines() if not line.lstrip().startswith("//")
        )
        found = [(kind, rest.strip(":").split("::")) for kind, rest in PATH.findall(text)]
        for kind, group in GROUP.findall(text):
            for item in group.split(","):
                item = item.strip().split(" as ")[0].strip()
                if item and item != "self":
                    found.append((kind, item.split("::")))
        for kind, segs in found:
            if True:
                t = target(mods, m, kind, segs, names)
                # A module naming its own descendants or ancestors is not a circle
                # between siblings; only edges between distinct top modules count.
                if t and t[:1] != m[:1]:
                    edges[m].add(t)
    # Collapse to top-level modules (benchmarks, synthetic, svm, task, …).
    top = {}
    for m, ts in edges.items():
        top.setdefault(m[0], set()).update(t[0] for t in ts if t[0] != m[0])
    return top


def cycles(g):
    """Tarjan's strongly connected components with more than one node."""
    index, low, stack, on, out, n = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = n[0]
        n[0] += 1
        stack.append(v)
        on.add(v)
        for w in g.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
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

    for v in list(g):
        if v not in index:
            visit(v)
    return out


def main():
    roots = [Path(p) for p in sys.argv[1:]] or sorted(Path("crates").glob("*"))
    found = False
    for root in roots:
        src = root / "src"
        if not src.is_dir():
            continue
        g = graph(src)
        cs = cycles(g)
        edges = sum(len(v) for v in g.values())
        print(f"{root}: {len(g)} modules, {edges} edges, "
              f"{'circles: ' + '; '.join(' <-> '.join(c) for c in cs) if cs else 'no circle'}")
        if "-v" in sys.argv or len(roots) == 1:
            for m in sorted(g):
                print(f"  {m} -> {', '.join(sorted(g[m])) or '-'}")
        found |= bool(cs)
    sys.exit(1 if found else 0)


if __name__ == "__main__":
    main()
