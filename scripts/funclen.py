#!/usr/bin/env python3
"""funclen.py - the function-length check: no function in src/**/*.c over 150 lines without a
reason written above it (issue 35).

Owns: finding every function definition of src/**/*.c with a quick parser that relies on the
tree's formatting (checked by this script: a definition's body opens with "{" at column 0 on
the line after its declarator, or at the end of a column-0 declarator line, and closes with "}"
at column 0), measuring it (declarator to closing brace, inclusive), and judging it: a function
over the limit passes when the comment block right above its declarator (or the line right
above) holds `long:` followed by a reason; otherwise it fails unless the ratchet baseline
(scripts/funclen.baseline, one `file: function` line each, with why) lists it.  A baseline
line whose function is gone or no longer long is stale and fails too (remove it:
--drop-stale), so the baseline only shrinks.

  python3 scripts/funclen.py                 the check (run-tests.sh runs it beside layers.py)
  python3 scripts/funclen.py --list          also: every function over the limit, with its length
  python3 scripts/funclen.py --drop-stale    rewrite the baseline without its stale lines
Exit 0: nothing new, nothing stale; 1: otherwise.  No dependencies beyond python3.
"""
import argparse
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
LIMIT = 150
NAME_RE = re.compile(r"([A-Za-z_]\w*)\s*\(")
REASON_RE = re.compile(r"\blong:\s*\S")
OPEN_SAME_LINE = re.compile(r"^[A-Za-z_].*\)\s*\{\s*$")


def declarator_start(lines, i):
    """The first line of the declarator that ends at line i (a run of non-blank lines that are
    not a comment's end, a preprocessor line or the end of the previous definition)."""
    j = i
    while j > 0:
        prev = lines[j - 1].rstrip()
        if (not prev or prev.startswith(("}", "#", "/*", " *", "*/", "//")) or prev.endswith((";", "*/"))):
            break
        j -= 1
    return j


def has_reason(lines, start):
    """Whether the line right above the declarator, or the comment block ending there, says
    `long:` with a reason."""
    j = start - 1
    if j < 0:
        return False
    if REASON_RE.search(lines[j]):
        return True
    if not lines[j].rstrip().endswith("*/") and not lines[j].lstrip().startswith("//"):
        return False
    while j >= 0:
        if REASON_RE.search(lines[j]):
            return True
        s = lines[j].lstrip()
        if s.startswith("/*") or (s.startswith("//") and (j == 0 or not lines[j - 1].lstrip().startswith("//"))):
            return False
        j -= 1
    return False


def functions(path):
    """(name, first line, length, has a reason) of every function definition in one file."""
    with open(path, encoding="utf-8", errors="replace") as f:
        lines = f.read().split("\n")
    out, i = [], 0
    while i < len(lines):
        line = lines[i]
        if line.rstrip() == "{" and i > 0:
            decl_end = i - 1
        elif OPEN_SAME_LINE.match(line) and "=" not in line and not line.startswith(("struct", "enum", "union", "typedef")):
            decl_end = i
        else:
            i += 1
            continue
        start = declarator_start(lines, decl_end)
        m = NAME_RE.search(" ".join(lines[start:decl_end + 1]))
        end = i + 1
        while end < len(lines) and not lines[end].startswith("}"):
            end += 1
        if m:
            out.append((m.group(1), start + 1, end - start + 1, has_reason(lines, start)))
        i = end + 1
    return out


def scan(root):
    """Every function over the limit: {"file: name": (length, has a reason)}."""
    found = {}
    for dirpath, _dirs, files in os.walk(os.path.join(root, "src")):
        for name in sorted(files):
            if not name.endswith(".c"):
                continue
            path = os.path.join(dirpath, name)
            rel = os.path.relpath(path, root)
            for fn, _first, length, reason in functions(path):
                if length > LIMIT:
                    found[f"{rel}: {fn}"] = (length, reason)
    return found


def read_baseline(path):
    """The baseline's `file: function` keys (a `#` starts a comment: the why)."""
    if not os.path.exists(path):
        return []
    keys = []
    with open(path, encoding="utf-8") as f:
        for ln in f:
            key = ln.split("#", 1)[0].strip()
            if key:
                keys.append(key)
    return keys


def drop_stale(path, stale):
    with open(path, encoding="utf-8") as f:
        kept = [ln for ln in f if ln.split("#", 1)[0].strip() not in stale]
    with open(path, "w", encoding="utf-8") as f:
        f.writelines(kept)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", default=os.path.dirname(HERE))
    ap.add_argument("--baseline", default=os.path.join(HERE, "funclen.baseline"))
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--drop-stale", action="store_true")
    args = ap.parse_args()
    found = scan(args.root)
    baseline = read_baseline(args.baseline)
    long_unexplained = {k for k, (_n, reason) in found.items() if not reason}
    new = sorted(long_unexplained - set(baseline))
    stale = [k for k in baseline if k not in long_unexplained]
    if args.list:
        for k, (n, reason) in sorted(found.items(), key=lambda x: -x[1][0]):
            print(f"  {n:>5}  {k}{'  (long: reason written)' if reason else ''}")
    print(f"funclen: {len(found)} function(s) over {LIMIT} lines, {len(found) - len(long_unexplained)} "
          f"with a written reason; the baseline lists {len(baseline)}")
    for k in new:
        print(f"NEW: {k} is {found[k][0]} lines (split it, or write `long: <reason>` above it)")
    for k in stale:
        print(f"GONE: {k} (no longer over {LIMIT} lines without a reason: remove it from "
              f"{os.path.basename(args.baseline)})")
    if stale and args.drop_stale:
        drop_stale(args.baseline, set(stale))
        print(f"funclen: dropped {len(stale)} stale line(s) from {args.baseline}")
        stale = []
    print(f"funclen: {len(new)} new, {len(stale)} gone -> {'FAIL' if new or stale else 'ok'}")
    return 1 if new or stale else 0


if __name__ == "__main__":
    sys.exit(main())
