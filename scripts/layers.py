#!/usr/bin/env python3
"""layers.py - the layer check: every quoted #include of src/ and tools/ against the arrows.

Owns: reading the layer rules (scripts/layers.json: which component every file belongs to,
each component's layer, the public headers, each component's declared interface headers),
resolving each `#include "..."` of every .c/.h under src/ and tools/ the way the compiler
does (the including file's directory, then the search path), judging it against the arrows
base <- engine <- network <- fronts, and holding the result to a ratchet: the baseline
(scripts/layers.baseline, one `file -> header` line per include against the arrows today)
may only shrink.  Exit 0: nothing new and nothing stale; 1: an include against the arrows
that the baseline does not list, or a baseline line that no longer occurs; 2: the rules do
not cover the tree (a file no component owns, a header that does not resolve).

Kinds of include against the arrows:
  upward    a lower layer includes a higher one (src/lib -> src/net)
  sibling   two components of one layer (a front -> another front; the proxy -> src/net)
  internal  a higher layer reaches a lower component's internal header: neither its public
            header (include/) nor the one header the includer declares for that layer
Everyone may include base.  docs/architecture.md explains the layers.

  python3 scripts/layers.py                  the check (what .ci/run runs)
  python3 scripts/layers.py --usage          also: each front's headers of every layer today
  python3 scripts/layers.py --symbols build  also: every symbol one component's objects use of
                                             another's (nm over build/*.p/*.o), judged as an include
                                             is and held to its own ratchet, scripts/layers.symbols
  python3 scripts/layers.py --drop-stale     rewrite the baseline without its stale lines
No dependencies beyond python3.
"""
import argparse
import collections
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
INCLUDE_RE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)
SCANNED = ("src", "tools")


class RulesError(Exception):
    """The rules do not cover the tree (exit 2)."""


def load_rules(path):
    """scripts/layers.json, checked for shape: known layers, at most one interface per layer."""
    with open(path, encoding="utf-8") as f:
        rules = json.load(f)
    rank = {name: i for i, name in enumerate(rules["layers"])}
    for comp, layer in rules["components"].items():
        if layer not in rank:
            raise RulesError(f"layers.json: component {comp}: unknown layer {layer}")
    owners = list(rules["dirs"].values()) + list(rules["lib"].values()) + list(rules["public"].values())
    for comp in owners:
        if comp not in rules["components"]:
            raise RulesError(f"layers.json: unknown component {comp}")
    for comp, decl in rules.get("interfaces", {}).items():
        for layer, header in decl.items():
            if not isinstance(header, str):
                raise RulesError(f"layers.json: interfaces.{comp}.{layer}: one header, not {header!r}")
            if rank[layer] >= rank[rules["components"][comp]]:
                raise RulesError(f"layers.json: interfaces.{comp}.{layer}: not a layer below {comp}'s")
    rules["rank"] = rank
    return rules


def component_of(rules, path):
    """The component a repository-relative path belongs to, or None."""
    if path in rules["public"]:
        return rules["public"][path]
    if path in rules["lib"]:
        return rules["lib"][path]
    for d, comp in rules["dirs"].items():
        if path.startswith(d + "/"):
            return comp
    return None


def sources(root):
    """Every .c and .h under src/ and tools/, repository-relative, sorted."""
    out = []
    for top in SCANNED:
        for dirpath, _dirs, files in os.walk(os.path.join(root, top)):
            for name in files:
                if name.endswith((".c", ".h")):
                    out.append(os.path.relpath(os.path.join(dirpath, name), root))
    return sorted(out)


def resolve(root, rules, src, name):
    """Where `#include "name"` in src lands: its own directory first, then the search path.
    A generated header (listed in the rules, absent from the tree) counts as present."""
    candidates = [os.path.join(os.path.dirname(src), name)]
    candidates += [os.path.join(d, name) for d in rules["search"]]
    for cand in candidates:
        cand = os.path.normpath(cand)
        if os.path.isfile(os.path.join(root, cand)) or cand in rules["lib"]:
            return cand
    return None


def judge(rules, src_comp, hdr, hdr_comp):
    """None if the include follows the arrows, else its kind (upward, sibling, internal)."""
    if src_comp == hdr_comp or rules["components"][hdr_comp] == "base":
        return None
    rank = rules["rank"]
    src_layer, hdr_layer = rules["components"][src_comp], rules["components"][hdr_comp]
    if rank[hdr_layer] > rank[src_layer]:
        return "upward"
    if rank[hdr_layer] == rank[src_layer]:
        return "sibling"
    if hdr in rules["public"]:
        return None
    if rules.get("interfaces", {}).get(src_comp, {}).get(hdr_layer) == hdr:
        return None
    return "internal"


def scan(root, rules):
    """Every quoted include as (src, header, src component, header component, kind or None)."""
    found, problems = [], []
    for src in sources(root):
        src_comp = component_of(rules, src)
        if src_comp is None:
            problems.append(f"{src}: no component owns this file (scripts/layers.json)")
            continue
        with open(os.path.join(root, src), encoding="utf-8", errors="replace") as f:
            text = f.read()
        for name in INCLUDE_RE.findall(text):
            hdr = resolve(root, rules, src, name)
            hdr_comp = component_of(rules, hdr) if hdr else None
            if hdr_comp is None:
                problems.append(f'{src}: #include "{name}" resolves to no classified header ({hdr})')
                continue
            found.append((src, hdr, src_comp, hdr_comp, judge(rules, src_comp, hdr, hdr_comp)))
    for path in rules["lib"]:
        generated = path.endswith("seccomp_bpf.h") or path.endswith(".pb-c.h")
        if not os.path.isfile(os.path.join(root, path)) and not generated:
            problems.append(f"{path}: classified in scripts/layers.json but not in the tree")
    return found, problems


def read_baseline(path):
    """The baseline's `file -> header` lines (comments and blank lines skipped)."""
    if not os.path.exists(path):
        return []
    with open(path, encoding="utf-8") as f:
        return [ln.strip() for ln in f if ln.strip() and not ln.lstrip().startswith("#")]


def report_counts(violations):
    """Counts by kind and by arrow (component -> component)."""
    kinds = collections.Counter(v[4] for v in violations)
    arrows = collections.Counter((v[2], v[3], v[4]) for v in violations)
    for kind in ("upward", "internal", "sibling"):
        print(f"  {kind:<9}{kinds.get(kind, 0):>4}")
    for (a, b, kind), n in sorted(arrows.items(), key=lambda x: (-x[1], x[0])):
        print(f"    {a} -> {b} ({kind}): {n}")


def report_usage(found, rules):
    """Each front's (and the proxy's and network's) headers of other components, today."""
    usage = collections.defaultdict(collections.Counter)
    for src, hdr, sc, hc, _kind in found:
        if sc != hc and rules["components"][sc] != "base":
            usage[sc][hdr] += 1
    print("\nheaders of other components, by includer (count of #include lines):")
    for comp in sorted(usage, key=lambda c: (rules["rank"][rules["components"][c]], c)):
        items = ", ".join(f"{os.path.basename(h)}{'' if n == 1 else f' x{n}'}"
                          f"[{component_of(rules, h)}]" for h, n in sorted(usage[comp].items()))
        print(f"  {comp}: {items}")


def object_sources(root):
    """Meson's object names (src_lib_exec.c.o) -> the source files they were compiled from."""
    return {src.replace("/", "_") + ".o": src for src in sources(root)}


def nm_symbols(obj, flags):
    """Global symbol names of one object: nm's defined (-g --defined-only) or undefined (-u)."""
    out = subprocess.run(["nm", *flags, obj], capture_output=True, text=True, check=True).stdout
    return {ln.split()[-1] for ln in out.splitlines() if ln.strip()}


DECL_RE = re.compile(r"\b(mxc_\w+)\s*\(|^extern\b[^;(]*\b(mxc_\w+)\s*;", re.M)
COMMENT_RE = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)


def declared_names(root, header):
    """The mxc_* functions and variables a header declares (comments skipped)."""
    with open(os.path.join(root, header), encoding="utf-8") as f:
        text = COMMENT_RE.sub("", f.read())
    return {a or b for a, b in DECL_RE.findall(text)}


def public_names(root, rules):
    """What any layer may call of another: libmxc.so's exports (src/lib/exports.map) and what the
    public headers declare."""
    with open(os.path.join(root, "src/lib/exports.map"), encoding="utf-8") as f:
        names = set(re.findall(r"^\s*(mxc_\w+);", f.read(), re.M))
    for hdr in rules["public"]:
        names |= declared_names(root, hdr)
    return names


def read_objects(build, root, rules):
    """nm over build/*.p/*.o: {component: (defined, undefined)} and symbol -> its component."""
    owner, by_comp = {}, collections.defaultdict(lambda: (set(), set()))
    objects = object_sources(root)
    for pdir in sorted(os.listdir(build)):
        if not pdir.endswith(".p") or not os.path.isdir(os.path.join(build, pdir)):
            continue
        for obj in sorted(os.listdir(os.path.join(build, pdir))):
            src = objects.get(obj)
            comp = component_of(rules, src) if src else None
            if comp is None:
                continue
            path = os.path.join(build, pdir, obj)
            defined = nm_symbols(path, ["-g", "--defined-only"])
            for name in defined:
                owner.setdefault(name, comp)
            by_comp[comp][0].update(defined)
            by_comp[comp][1].update(nm_symbols(path, ["-u"]))
    return by_comp, owner


def symbol_uses(build, root, rules):
    """Every symbol one component's objects use of another's, judged as an include is: None when
    it follows the arrows (base; the public headers and exports; the user's declared interface for
    that layer), else upward, sibling or internal.  [(user, symbol, owner, kind or None)]."""
    by_comp, owner = read_objects(build, root, rules)
    public = public_names(root, rules)
    rank = rules["rank"]
    iface = {(c, layer): declared_names(root, h)
             for c, decl in rules.get("interfaces", {}).items() for layer, h in decl.items()}
    uses = []
    for comp, (defined, undef) in by_comp.items():
        for name in sorted(undef - defined):
            o = owner.get(name)
            if o is None or o == comp:
                continue
            ul, ol = rules["components"][comp], rules["components"][o]
            if ol == "base":
                kind = None
            elif rank[ol] > rank[ul]:
                kind = "upward"
            elif rank[ol] == rank[ul]:
                kind = "sibling"
            elif name in public or name in iface.get((comp, ol), ()):
                kind = None
            else:
                kind = "internal"
            uses.append((comp, name, o, kind))
    return uses, by_comp


def check_symbols(args, rules):
    """The symbol check over a build: every use against the arrows must be in the symbol
    baseline (scripts/layers.symbols, `user -> symbol (owner)` lines), and every line there must
    still occur.  Returns the number of new and stale lines."""
    uses, by_comp = symbol_uses(args.symbols, args.root, rules)
    if not by_comp:
        print(f"layers: no objects under {args.symbols} (build first: ninja -C {args.symbols})")
        return 1
    current = {f"{u} -> {n} ({o})": (u, n, o, k) for u, n, o, k in uses if k}
    baseline = read_baseline(args.symbol_baseline)
    new = [ln for ln in sorted(current) if ln not in set(baseline)]
    stale = [ln for ln in baseline if ln not in current]
    print(f"\nsymbols from {args.symbols} (nm): {len(uses)} uses of another component's symbols; "
          f"{len(current)} against the arrows, the symbol baseline lists {len(baseline)}")
    for comp in sorted(by_comp, key=lambda c: (rules["rank"][rules["components"][c]], c)):
        mine = [x for x in uses if x[0] == comp]
        owners = collections.Counter(x[2] for x in mine)
        parts = ", ".join(f"{o} {n}" for o, n in sorted(owners.items()))
        print(f"  {comp}: {len(mine)} symbols of other components ({parts or 'none'}), "
              f"{sum(1 for x in mine if x[3])} against the arrows")
    for ln in new:
        u, n, o, k = current[ln]
        print(f"NEW {k} symbol: {ln}   ({u} may not use {o}'s {n}: not in its declared interface)")
    for ln in stale:
        print(f"GONE symbol: {ln}   (no longer used: remove it from {os.path.basename(args.symbol_baseline)})")
    if stale and args.drop_stale:
        write_baseline(args.symbol_baseline, [ln for ln in baseline if ln in current])
        print(f"layers: dropped {len(stale)} stale line(s) from {args.symbol_baseline}")
        stale = []
    return len(new) + len(stale)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", default=os.path.dirname(HERE))
    ap.add_argument("--rules", default=os.path.join(HERE, "layers.json"))
    ap.add_argument("--baseline", default=os.path.join(HERE, "layers.baseline"))
    ap.add_argument("--usage", action="store_true")
    ap.add_argument("--symbols", metavar="BUILD")
    ap.add_argument("--symbol-baseline", default=os.path.join(HERE, "layers.symbols"))
    ap.add_argument("--drop-stale", action="store_true")
    args = ap.parse_args()
    try:
        rules = load_rules(args.rules)
        found, problems = scan(args.root, rules)
    except (RulesError, OSError, ValueError, KeyError) as e:
        print(f"layers: {e}", file=sys.stderr)
        return 2
    for p in problems:
        print(f"layers: {p}", file=sys.stderr)
    if problems:
        return 2
    return check(args, rules, found)


def check(args, rules, found):
    """The ratchet against the baseline, the counts, and the optional reports."""
    violations = [v for v in found if v[4]]
    current = {f"{v[0]} -> {v[1]}": v for v in violations}
    baseline = read_baseline(args.baseline)
    listed = set(baseline)
    new = [line for line in current if line not in listed]
    stale = [line for line in baseline if line not in current]
    nfiles = len({v[0] for v in found})
    print(f"layers: {len(found)} quoted includes in {nfiles} files; "
          f"{len(violations)} against the arrows, the baseline lists {len(baseline)}")
    report_counts(violations)
    if args.usage:
        report_usage(found, rules)
    bad_symbols = check_symbols(args, rules) if args.symbols else 0
    for line in new:
        v = current[line]
        print(f"NEW {v[4]}: {line}   ({v[2]} may not include {v[3]}'s header here)")
    for line in stale:
        print(f"GONE: {line}   (no longer in the tree: remove it from {os.path.basename(args.baseline)})")
    if stale and args.drop_stale:
        keep = [ln for ln in baseline if ln in current]
        write_baseline(args.baseline, keep)
        print(f"layers: dropped {len(stale)} stale line(s) from {args.baseline}")
        stale = []
    fail = bool(new or stale or bad_symbols)
    print(f"layers: {len(new)} new, {len(stale)} gone"
          f"{f', {bad_symbols} symbol line(s) new or gone' if bad_symbols else ''} -> {'FAIL' if fail else 'ok'}")
    return 1 if fail else 0


def write_baseline(path, lines):
    """The baseline with its header comment, sorted."""
    with open(path, encoding="utf-8") as f:
        head = [ln for ln in f if ln.lstrip().startswith("#")]
    with open(path, "w", encoding="utf-8") as f:
        f.writelines(head)
        f.writelines(line + "\n" for line in sorted(lines))


if __name__ == "__main__":
    sys.exit(main())
