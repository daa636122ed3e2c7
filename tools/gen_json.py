#!/usr/bin/env python3
"""gen_json.py - `uevent dump --json`'s printers (tools/uevent-json.h) from the record model.

One printer per record struct, keys named as the members, and json_perf_member() for the
member a record's body sets. The JSON helpers they call (json_str, json_bytes, json_u64s)
are the CLI's own. usage: gen_json.py libuevent/uevent.h > tools/uevent-json.h
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "libuevent"))
import records_model as rm  # noqa: E402


def member(f):
    """The C that prints member f of struct *s (after its key)."""
    if f.nested:
        return f"json_{f.nested}(&s->{f.name}, bo);"
    if f.kind == "str":
        return f'json_str(s->{f.name} ? s->{f.name} : "");'
    if f.kind == "bytes":
        n = rm.expr(f.count, "s->")
        if f.array:
            n = f"({n}) < sizeof(s->{f.name}) ? ({n}) : sizeof(s->{f.name})"
        return f"json_bytes(s->{f.name}, {n});"
    if f.kind == "u64":
        per = rm.expr(f.per, "s->") if f.per else "1"
        return (f"json_u64s(s->{f.name}, {rm.expr(f.count, 's->')}, {per}, "
                f"{'1' if f.per else '0'}, bo);")
    return None


def printer(model, name):
    out = [f"static void json_{name}(const struct {name} *s, int bo)", "{"]
    if not any(f.kind == "u64" or f.nested for f in model[name]):
        out.append("\t(void)bo;")
    lead = "{"
    for f in model[name]:
        if f.name == "sz":
            continue
        key = f'{lead}\\"{f.name}\\": '
        lead = ", "
        code = member(f)
        if code is not None:
            line = f'printf("{key}"); {code}'
        elif f.ctype.startswith("int"):
            line = f'printf("{key}%" PRId64, (int64_t)s->{f.name});'
        else:
            line = f'printf("{key}%" PRIu64, (uint64_t)s->{f.name});'
        out.append("\t" + line)
    return out + ["\tputchar('}');", "}", ""]


def c_json(model):
    out = ["/* uevent-json.h - generated from libuevent/uevent.h by tools/gen_json.py:",
           " * `uevent dump --json`'s printer for each record struct, keys named as the",
           " * members. Do not edit: change uevent.h and run `make records`. */", ""]
    members = model.union_members()
    # the union members' structs and the structs they nest
    printed = {s for _, s in members} | {f.nested for n in model.records
                                         for f in model[n] if f.nested}
    for name in model.records:
        if name in printed and not any(f.union for f in model[name]):
            out += printer(model, name)
    out += ["/* The member the record's body says is set, as \"member\": {...}. */",
            "static void json_perf_member(const struct uevent_perf_record *r, int bo)",
            "{", "\tswitch (r->body) {"]
    for m, st in members:
        out += [f"\tcase UEVENT_BODY_{m.upper()}:", f'\t\tprintf(", \\"{m}\\": ");',
                f"\t\tjson_{st}(&r->u.{m}, bo);", "\t\tbreak;"]
    out += ["\t}", "}"]
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    rm.main(sys.argv, c_json)
