"""generated.py - docs/build.md's table of generated files against the makefiles.

Each file the table says a makefile rule makes: its rule target has a recipe in exactly one
of Makefile.am and the local.mk files it includes, the one the table names, in the folder
holding the file; and every target with a recipe there (not .PHONY, not one of
Automake's -local and -hook targets) is in the table; no recipe writes (> or mv) another
rule's target.
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


def written(cmd, targets):
    """The paths a recipe line writes with > or mv, as make names targets."""
    cmd = cmd.replace("$(@D)", os.path.dirname(targets[0])).replace("$@", targets[0])
    out = []
    word = r"((?:\$\([^)]*\)|[^\s;&|)])+)"
    for m in re.finditer(r"(?<![0-9&>])>\s*" + word + r"|\bmv\s+(?:-f\s+)?\S+\s+" + word, cmd):
        w = (m.group(1) or m.group(2)).strip("'\"")
        w = re.sub(r"^(\$\((abs_)?top_(src|build)dir\)|\$\(srcdir\))/|^\./", "", w)
        w = re.sub(r"\.tmp$", "", w)
        if "$" not in w and w != "/dev/null":
            out.append(w)
    return out


made = {}      # target -> [fragment, ...], one entry per recipe
writes = []    # (path, the targets of the recipe writing it, fragment)
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
            j = i + 1
            while j < len(lines) and lines[j].startswith("\t"):
                for w in written(expand(lines[j]), targets):
                    writes.append((w, targets, path))
                j += 1

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
for w, targets, frag in writes:
    if w in made and w not in targets:
        bad.append(f"{w}: written by the recipe of {' '.join(targets)} ({frag}) too")
for t in sorted(made):
    # Automake's hooks (all-local, distcheck-hook...) make no file of their name
    if t not in listed and t not in phony and not t.endswith(("-local", "-hook")):
        bad.append(f"{t}: made in {', '.join(made[t])}, not in the table")
if not rows:
    bad.append("docs/build.md: no table under '## Generated files'")
for b in dict.fromkeys(bad):
    print(b)
if bad:
    sys.exit(1)
print(f"{len(rows)} rows, {len(listed)} targets")
