#!/usr/bin/env python3
"""tef-check.py - check a JSON trace against the Trace Event Format's rules.

The rules are those of the Trace Event Format document (JSON Object Format) as
Perfetto's and chrome://tracing's importers apply them:
  - a JSON object with a "traceEvents" array of objects;
  - every event has a "ph" the format defines, and "pid"/"tid" integers;
  - every event but metadata has a numeric "ts" (microseconds) >= 0;
  - B/E are per thread and nest: an E closes the innermost open B of its thread, at a
    ts not before it, with the same name when it gives one;
  - b/e are matched by (cat, id) with the same name, and an e never comes first;
  - C events have "args" of numbers, i events an "s" scope in g/p/t;
  - M events are process_name/thread_name/process_sort_index/thread_sort_index/
    process_labels with "args".
Prints each violation, then a summary line "ok EVENTS B=.. E=.. ..." or exits 1.
"""
import json
import sys

PHASES = set("BEXiIbenSTpFsftPOND") | {"C", "M", "R", "c", "(", ")"}
META = {"process_name", "thread_name", "process_sort_index", "thread_sort_index",
        "process_labels"}


def main(path):
    with open(path) as f:
        doc = json.load(f)
    bad = []
    if not isinstance(doc, dict) or not isinstance(doc.get("traceEvents"), list):
        print("not a JSON object with a traceEvents array")
        return 1
    stacks = {}   # (pid, tid) -> [(name, ts)]
    asyncs = {}   # (cat, id) -> name
    count = {}
    for i, e in enumerate(doc["traceEvents"]):
        where = "event %d %s" % (i, json.dumps(e)[:120])
        if not isinstance(e, dict) or e.get("ph") not in PHASES:
            bad.append(where + ": no valid ph")
            continue
        ph = e["ph"]
        count[ph] = count.get(ph, 0) + 1
        if not isinstance(e.get("pid"), int) or not isinstance(e.get("tid"), int):
            bad.append(where + ": pid/tid not integers")
        if ph == "M":
            if e.get("name") not in META or not isinstance(e.get("args"), dict):
                bad.append(where + ": metadata without a known name and args")
            elif e["name"].endswith("_name") and not isinstance(e["args"].get("name"), str):
                bad.append(where + ": a name record without args.name")
            continue
        ts = e.get("ts")
        if not isinstance(ts, (int, float)) or ts < 0:
            bad.append(where + ": no ts >= 0")
            continue
        key = (e.get("pid"), e.get("tid"))
        if ph == "B":
            stacks.setdefault(key, []).append((e.get("name"), ts))
        elif ph == "E":
            st = stacks.get(key)
            if not st:
                bad.append(where + ": E with no open B on its thread")
                continue
            name, bts = st.pop()
            if "name" in e and e["name"] != name:
                bad.append(where + ": E named %r closes B %r" % (e["name"], name))
            if ts < bts:
                bad.append(where + ": E before its B")
        elif ph in "be":
            if "id" not in e:
                bad.append(where + ": async event without an id")
                continue
            akey = (e.get("cat"), e["id"])
            if ph == "b":
                if akey in asyncs:
                    bad.append(where + ": b of an id already open")
                asyncs[akey] = e.get("name")
            else:
                if akey not in asyncs:
                    bad.append(where + ": e with no open b")
                elif asyncs.pop(akey) != e.get("name"):
                    bad.append(where + ": e named unlike its b")
        elif ph == "C":
            args = e.get("args")
            if not isinstance(args, dict) or not args or \
                    not all(isinstance(v, (int, float)) for v in args.values()):
                bad.append(where + ": counter without numeric args")
        elif ph in "iI":
            if e.get("s", "t") not in ("g", "p", "t"):
                bad.append(where + ": instant with a bad scope")
    for b in bad:
        print(b)
    if bad:
        return 1
    open_b = sum(len(s) for s in stacks.values())
    print("ok %d events %s open_B=%d open_b=%d" % (
        len(doc["traceEvents"]), " ".join("%s=%d" % kv for kv in sorted(count.items())),
        open_b, len(asyncs)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
