#!/usr/bin/env python3
"""gen_records.py - the LuaJIT binding's uevent/_records.lua from the record model.

One converter per record struct (a table, members as named in C), the payload decoders,
the body union's members, the session options and perf_format{}, and the counters. The
readers of the notes' kinds they call are uevent/_notes.lua.
usage: gen_records.py libuevent/uevent.h > uevent/_records.lua
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "libuevent"))
import records_model as rm  # noqa: E402

FORMAT_BOOL = {"sample_id_all"}     # perf_format{}'s members given as booleans


# The range of a C type's values, as Lua bounds [lo, hi]: doubles, which a uint64_t cdata
# is compared with exactly up to 2^64 - 2^11 (the largest double below 2^64).
LUA_INT_RANGE = {"int": "-2^31, 2^31 - 1", "unsigned int": "0, 2^32 - 1",
                 "uint64_t": "0, 2^64 - 2^11"}

def lua(model):
    members = model.union_members()
    union = model.union()
    out = ["-- _records.lua - generated from libuevent/uevent.h by bindings/lua/gen_records.py:",
           "-- the record structs as Lua tables (one converter per struct, members as named in",
           "-- C), the payload decoders, and which union member each record body sets. Do not",
           "-- edit: change uevent.h. uevent.lua calls this with the library and its helpers.",
           "return function(lib, ffi, h)",
           "local cstr, fail, tnew = h.cstr, h.fail, h.tnew",
           "local ffi_new, ffi_string, sizeof, math_min = ffi.new, ffi.string, ffi.sizeof, math.min",
           "local bit = require \"bit\"",
           "local R = { convert = {}, decoders = {}, body_struct = {}, member_of_body = {} }",
           "local convert = R.convert",
           "-- the readers of the notes' kinds (uevent/_notes.lua)",
           "local notes = require \"uevent._notes\"(lib)",
           "local bytes, u64s = notes.bytes, notes.u64s",
           "",
           "-- 64-bit members stay uint64_t/int64_t cdata (addresses do not fit a double); narrower",
           "-- ones are numbers; byte blobs are Lua strings; u64 arrays are Lua arrays of cdata.",
           ]
    for name in [s for s in model.records if s not in (rm.ROOT, union)]:
        fl = [f for f in model[name] if f.name != "sz"]
        out.append(f"convert.{name} = function(s, bo)")
        out.append(f"  local t = tnew(0, {len(fl) + 1})")
        for f in fl:
            m = "s." + f.name
            if f.kind == "str":
                e = f"cstr({m})"
            elif f.kind == "bytes" and f.array:
                e = f"bytes({m}, math_min({rm.expr(f.count, 's.')}, sizeof({m})))"
            elif f.kind == "bytes":
                e = f"bytes({m}, {rm.expr(f.count, 's.')})"
            elif f.kind == "u64":
                e = f"u64s({m}, {rm.expr(f.count, 's.')}, {rm.expr(f.per, 's.') if f.per else '1'}, bo)"
            elif f.nested:
                e = f"convert.{f.nested}({m}, bo)"
            elif f.ctype.endswith("int64_t"):
                e = m
            else:
                e = f"tonumber({m})"
            out.append(f"  t.{f.name} = {e}")
        out += ["  return t", "end"]
    out += ["", "-- union uevent_perf_body: member -> struct; enum uevent_perf_body_kind -> member"]
    for m, st in members:
        out.append(f'R.body_struct.{m} = "{st}"')
        out.append(f'R.member_of_body[tonumber(lib.UEVENT_BODY_{m.upper()})] = "{m}"')
    out += ["", "-- The sample_id members present, as id.fields says (narrow ones as numbers).",
            "function R.sample_id(id)", "  local t, f = {}, id.fields"]
    for f in model["uevent_sample_id"]:
        if f.name != "fields":
            v = f"id.{f.name}" if f.ctype.endswith("int64_t") else f"tonumber(id.{f.name})"
            out.append(f"  if bit.band(f, lib.UEVENT_ID_{f.idbit}) ~= 0 then t.{f.name} = {v} end")
    out += ["  return t", "end"]
    out += ["", "-- struct uevent_record as a table (as Python's and Rust's Record): its payload",
            "-- decoded beside data by decode(type, data, size, bo), the sample_id members present",
            "function R.uevent_record(r, bo, decode)", "  local t = R.sample_id(r.id)"]
    for f in model["uevent_record"]:
        if f.kind == "bytes":
            out += [f"  t.{f.name} = bytes(r.{f.name}, r.{f.count})",
                    f"  t.payload = decode(r.type, t.{f.name}, #t.{f.name}, bo)",
                    f'    or {{ kind = "raw", type = tonumber(r.type), data = t.{f.name} }}']
        elif not f.nested and f.name not in ("sz", "size"):
            out.append(f"  t.{f.name} = tonumber(r.{f.name})")
    out += ["  return t", "end"]
    out += ["", "-- session options: one boolean per UEVENT_SESSION_* flag, the numbers of the struct",
            "R.session_flags = {"]
    out += [f"  {fl.lower()} = lib.UEVENT_SESSION_{fl}," for fl, _ in model.enum_members("UEVENT_SESSION_")]
    out.append("}")
    out += ["-- its other members: a string, or a number in its C type's range",
            "local session_members = {"]
    out += [f'  {f.name} = "string",' if f.ptr else
            f"  {f.name} = {{ {LUA_INT_RANGE[f.ctype]} }}," for f in model["uevent_session_opts"]
            if f.name not in ("sz", "flags", "transports")]
    out += ["}",
            "-- Sets struct uevent_session_opts o from session{}'s keys, named as its members",
            "-- (transports is the caller's): true, or nil, err, -EINVAL.",
            "function R.session_opts(o, opts)",
            "  for k, range in pairs(session_members) do",
            "    local v = opts[k]",
            "    if v ~= nil then",
            '      if range == "string" and type(v) ~= "string" then',
            '        return fail(-22, "session: " .. k .. " must be a string")',
            "      end",
            '      if range ~= "string" and (type(v) ~= "number" and type(v) ~= "cdata"',
            "                                or v < range[1] or v > range[2]) then",
            '        return fail(-22, ("session: %s must be a number in [%.0f, %.0f]"):format(k, range[1], range[2]))',
            "      end",
            "      o[k] = v",
            "    end",
            "  end",
            "  local flags = 0",
            "  for k, f in pairs(R.session_flags) do",
            "    if opts[k] then flags = bit.bor(flags, f) end",
            "  end",
            "  o.flags = flags",
            "  return true",
            "end"]
    out += ["", "-- perf_format{}: struct uevent_perf_format from its members by name (a boolean one",
            "-- is set by true or a non-zero number); the raw layout is the library's to fill",
            "function R.perf_format(o)",
            '  local f = ffi_new("struct uevent_perf_format")',
            "  f.sz = sizeof(f)",
            "  o = o or {}"]
    for f in model.format_fields():
        if f.name in FORMAT_BOOL:
            out.append(f"  f.{f.name} = (o.{f.name} == true or (tonumber(o.{f.name}) or 0) ~= 0) and 1 or 0")
        else:
            out.append(f"  if o.{f.name} then f.{f.name} = o.{f.name} end")
    out += ["  return f", "end"]
    out += ["", "-- the batch structs' columns, from their notes: rows = { member, C type, ... } of",
            "-- the [column] and [offset in T] members; tail = { member, C type, its room, its count }",
            "R.batch_columns = {}"]
    for st, cols in model.batches():
        rows = ", ".join(f'"{f.name}", "{f.ctype}"' for f in cols if not f.tail)
        t = next(f for f in cols if f.tail)
        out += [f"R.batch_columns.{st} = {{",
                f"  rows = {{ {rows} }},",
                f'  tail = {{ "{t.name}", "{t.ctype}", "{t.tail[0]}", "{t.tail[1]}" }},', "}"]
    out += ["", "-- the counter structs as tables of numbers (a [by F] array: by the name F gives)",
            "R.counters = {}"]
    for name in rm.COUNTERS:
        out += [f"R.counters.{name} = function(s)", "  local t = {}"]
        for f in model[name]:
            if f.by:
                out += [f"  t.{f.name} = {{}}",
                        f"  for i = 0, sizeof(s.{f.name}) / sizeof(s.{f.name}[0]) - 1 do",
                        f"    t.{f.name}[cstr(lib.{f.by}(i)) or tostring(i)] = tonumber(s.{f.name}[i])",
                        "  end"]
            else:
                out.append(f"  t.{f.name} = tonumber(s.{f.name})")
        out += ["  return t", "end"]

    def val(f, o):
        if f.kind == "str":
            return f"ffi_string({o}.{f.name}, {o}.{f.count})"
        if f.kind == "bytes":
            return f"ffi_string({o}.{f.name}, {f.count})"
        if f.each:
            return f"each_{f.each}({o}, bo)"
        return f"{o}.{f.name}"
    out += ["", "-- payload decoders: (buffer, size, byte order) -> table with .kind, or nil, err"]
    for st in model.entry_structs():
        fl = model.payload_fields(st)
        out += [f"local function each_{st}(info, bo)",
                f'  local off, e, t = ffi_new("uint32_t[1]"), ffi_new("struct {st}"), {{}}',
                "  while true do",
                f"    local r = lib.{st}_next(info, bo, off, e)",
                f'    if r < 0 then return fail(r, "{st[7:]}") end',
                "    if r == 0 then return t end",
                "    t[#t + 1] = { " + ", ".join(f"{f.name} = {val(f, 'e')}" for f in fl) + " }",
                "  end", "end"]
    for t, st in model.payloads():
        fl = model.payload_fields(st)
        out += [f"R.decoders[tonumber(lib.UEVENT_TYPE_{t})] = function(buf, n, bo)",
                f'  local o = ffi_new("struct {st}")',
                f"  local r = lib.{st}_decode(buf, n, bo, o)",
                f'  if r < 0 then return fail(r, "{st[7:]} payload") end']
        for f in fl:
            if f.each:
                out += [f"  local {f.name}, err, code = {val(f, 'o')}",
                        f"  if not {f.name} then return nil, err, code end"]
        out.append(f'  return {{ kind = "{st[7:]}", ' + ", ".join(
            f"{f.name} = {f.name if f.each else val(f, 'o')}" for f in fl) + " }")
        out.append("end")
    out += ["return R", "end"]
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    rm.main(sys.argv, lua)
