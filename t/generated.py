"""generated.py - docs/build.md's table of generated files against the makefiles.

Each file the table says a makefile rule makes: its rule target has a recipe in exactly one
of Makefile.am and the local.mk files it includes, the one the table names, in the folder
holding the file; and every target with a recipe there (not .PHONY, not one of
Automake's -local and -hook targets) is in the table.
usage: generated.py TOP_SRCDIR: prints each problem and exits 1, else the number of rows."""
import os
import re
import sys

top = sys.argv[1]


def fragments(path, reldir):
    """Makefile.am and the local.mk files it includes, in order: (path, reldir, lines)."""
    with open(os.path.join(top, path)) as f:
        text = f.read().replace("\\\n", " ")
    canon = re.sub(r"[^A-Za-z0-9_]", "_", reldir)
    text = text.replace("%reldir%", reldir).replace("%canon_reldir%", canon)
    lines = text.split("\n")
    out = [(path, reldir, lines)]
    for ln in lines:
        m = re.match(r"include\s+(\S+)", ln)
        if m:
            inc = m.group(1)
            out += fragments(inc, os.path.dirname(inc))
    return out


frags = fragments("Makefile.am", "")
var = {"EXEEXT": "", "OBJEXT": "o"}
for _, _, lines in frags:
    for ln in lines:
        m = re.match(r"([A-Za-z_][A-Za-z0-9_]*)\s*(\+?=)\s*(.*)$", ln)
        if m and not ln.startswith("\t"):
            name, op, val = m.groups()
            var[name] = (var.get(name, "") + " " + val) if op == "+=" else val


def expand(s, depth=0):
    if depth > 10:
        return s
    t = re.sub(r"\$\(([A-Za-z_][A-Za-z0-9_]*)\)",
               lambda m: var.get(m.group(1), m.group(0)), s)
    return t if t == s else expand(t, depth + 1)


made = {}      # target -> [fragment, ...], one entry per recipe
phony = set()
for path, reldir, lines in frags:
    for i, ln in enumerate(lines):
        if not ln or ln[0] in "\t#" or re.match(r"(if|else|endif|include)\b", ln):
            continue
        m = re.match(r"([^=:]+):(?!=)", ln)
        if not m:
            continue
        targets = expand(m.group(1)).split()
        if m.group(1).strip() == ".PHONY":
            phony.update(expand(ln.split(":", 1)[1]).split())
            continue
        if i + 1 < len(lines) and lines[i + 1].startswith("\t"):
            for t in targets:
                made.setdefault(t, []).append(path)

rows = []
with open(os.path.join(top, "docs/build.md")) as f:
    section = False
    for ln in f:
        if ln.startswith("## "):
            section = ln.strip() == "## Generated files"
        m = re.match(r"\|\s*`([^`]+)`\s*\|\s*(.*?)\s*\|\s*`([^`]+)`\s*\|", ln) if section else None
        if m:
            rows.append((m.group(1), re.findall(r"`([^`]+)`", m.group(2)), m.group(3)))

bad = []
listed = set()
for file, targets, frag in rows:
    if not (frag.endswith("local.mk") or frag == "Makefile.am"):
        continue
    folder = os.path.dirname(frag)
    for t in targets:
        listed.add(t)
        where = made.get(t, [])
        if where != [frag]:
            bad.append(f"{t}: made in {', '.join(where) or 'no makefile'}, the table says {frag}")
        for p in (file, t):
            if folder and not p.startswith(folder + "/") or not folder and "/" in p:
                bad.append(f"{p}: outside {frag}'s folder")
for t in sorted(made):
    # Automake's hooks (all-local, distcheck-hook...) make no file of their name
    if t not in listed and t not in phony and not t.endswith(("-local", "-hook")):
        bad.append(f"{t}: made in {', '.join(made[t])}, not in the table")
if not rows:
    bad.append("docs/build.md: no table under '## Generated files'")
for b in bad:
    print(b)
if bad:
    sys.exit(1)
print(f"{len(rows)} rows, {len(listed)} targets")
