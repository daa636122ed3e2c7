-- test_uevent.lua - TAP tests of the LuaJIT binding: emit, read back, errors, golden files,
-- GC closing, and the JIT keeping a marking loop compiled.
local ffi = require "ffi"
local uevent = require "uevent"
local L = uevent.lib

local tap = require "tests.tap"
local ok, diag = tap.ok, tap.diag

local top_srcdir = os.getenv("top_srcdir") or "../../.."
local data = top_srcdir .. "/t/data/"
local tmp = tap.tmpname()
os.remove(tmp)
local path = tmp .. ".perf.data"
ffi.cdef "int getpid(void);"
local pid = ffi.C.getpid()

-- ---- emit through the file transport, read back --------------------------------
ok(uevent.open { transport = "file", path = path, ignore_env = true } == "file", "open{file} selects the file transport")
ok(uevent.transport() == "file" and uevent.enabled(), "file transport is enabled")
uevent.stats_reset()
ok(uevent.mark("hello from lua") == true, "mark returns true")
uevent.markf("rows=%d", 42)
uevent.counter("queue_depth", -7)
uevent.emit(L.UEVENT_TYPE_USER + 1, "\1\2\3")
local r = uevent.range_begin("outer")
uevent.mark("inside")
uevent.range_end(r)
local a, b = uevent.range("wrapped", function(x, y) return x + y, "second" end, 40, 2)
ok(a == 42 and b == "second", "range(name, fn, ...) returns fn's results")
local okc, err = pcall(uevent.range, "failing", function() error("boom", 0) end)
ok(not okc and err == "boom", "range(name, fn) ends the range and rethrows")
local aid = uevent.async_begin("async-op")
uevent.async_end(aid)
local tid, sid = "", ""
for i = 0, 15 do tid = tid .. string.char(i) end
for i = 0xa0, 0xa7 do sid = sid .. string.char(i) end
ok(uevent.trace_context(tid, sid, 1) == true, "trace_context")
do
  local rec = uevent.lib.uevent_thread_context_get()
  ok(uevent.thread_context(tid, sid, 1) == true and ffi.string(rec.span_id, 8) == sid
     and ffi.string(rec.trace_id, 16) == tid and rec.trace_flags == 1 and rec.valid == 1
     and ffi.sizeof(rec[0]) == 256, "thread_context stores ids and flags in the OTEP 4947 record")
  local inner = ("\1"):rep(8)
  local r1, r2 = uevent.thread_context(tid, inner, 0, { [0] = "/orders" }, function(x)
    return ffi.string(rec.span_id, 8), ffi.string(rec.attrs_data, rec.attrs_data_size), x
  end, 7)
  ok(r1 == inner and r2 == "\0\7/orders" and ffi.string(rec.span_id, 8) == sid
     and rec.attrs_data_size == 0, "thread_context(..., fn): fn runs in it, the outer comes back")
  local okc, err = pcall(uevent.thread_context, tid, inner, 0, function() error("boom", 0) end)
  ok(not okc and err == "boom" and ffi.string(rec.span_id, 8) == sid,
     "thread_context(..., fn) restores when fn raises, and re-raises")
  ok(type(uevent.thread_context_registered()) == "boolean" and uevent.thread_context_clear()
     and rec.valid == 0, "thread_context_registered is a boolean; clear leaves no context")
  local r, e = uevent.thread_context("short", sid)
  ok(r == nil and e and e:find("16 bytes"), "thread_context checks id lengths: nil, err")
  r, e = uevent.thread_context_attr(0, "x")
  ok(r == nil and e, "thread_context_attr with no context: nil, err")
  ok(uevent.process_context { service_name = "lua-test", attr_keys = { "http.route" } } == true,
     "process_context publishes")
end
local st = uevent.stats()
ok(st.emitted == 14 and st.dropped == 0, "stats: 14 emitted, 0 dropped (" .. st.emitted .. ")")

local rd = assert(uevent.file_reader(path))
local recs = {}
for rec in rd:records() do recs[#recs + 1] = rec end
rd:close()
ok(#recs == 14, "file reader yields the 14 records (" .. #recs .. ")")
local good = true
for i, x in ipairs(recs) do
  if x.pid ~= pid or not x.tid then good = false end
  if i > 1 and x.time < recs[i - 1].time then good = false end
end
ok(good, "records carry our pid, a tid, and ordered times")
ok(recs[1].payload.kind == "text" and recs[1].payload.text == "hello from lua", "mark decodes as text")
ok(recs[2].payload.text == "rows=42", "markf formats")
ok(recs[3].payload.kind == "counter" and recs[3].payload.name == "queue_depth" and recs[3].payload.value == -7, "counter")
ok(recs[4].payload.kind == "raw" and recs[4].type == L.UEVENT_TYPE_USER + 1 and recs[4].data == "\1\2\3", "user type is raw bytes")
ok(recs[5].payload.kind == "range_begin" and recs[5].payload.name == "outer" and recs[7].payload.kind == "range_end"
   and recs[7].payload.id == recs[5].payload.id and recs[6].payload.text == "inside", "range begin/body/end share the id")
ok(recs[8].payload.name == "wrapped" and recs[9].payload.id == recs[8].payload.id, "range(fn) begin and end")
ok(recs[10].payload.name == "failing" and recs[11].payload.id == recs[10].payload.id, "range(fn) ended despite the error")
ok(recs[12].payload.flags == L.UEVENT_RANGE_ASYNC and recs[13].payload.id == recs[12].payload.id, "async range")
ok(recs[14].payload.kind == "trace_context" and recs[14].payload.trace_id == tid and recs[14].payload.span_id == sid
   and recs[14].payload.flags == 1, "trace context")

-- ---- disabled --------------------------------------------------------------------
uevent.open { transport = "none", ignore_env = true }
local before = uevent.stats().emitted
-- A usdt tracer attached system-wide (a parallel test's may be) raises the word's low
-- bits, and the probe fires under any transport: then marks are formatted for it.
if bit.band(L.uevent_enabled_word, 0xffff) ~= 0 then
  tap.skip(1, "a usdt tracer is attached system-wide: marks are enabled for it")
else
  ok(not uevent.enabled() and uevent.mark("x") == true and uevent.markf("%d", {}) == true
     and uevent.stats().emitted == before, "disabled: marks succeed, format nothing, emit nothing")
end

-- ---- errors ----------------------------------------------------------------------
uevent.open { transport = "file", path = path, ignore_env = true }
uevent.stats_reset()
local res, msg, code = uevent.emit(L.UEVENT_TYPE_USER, string.rep("x", L.UEVENT_MAX_PAYLOAD + 1))
ok(res == nil and code == -7 and msg:find("emit"), "oversized emit: nil, err, -E2BIG (" .. tostring(msg) .. ")")
ok(uevent.stats().dropped == 0, "a call the binding refuses never reaches the library: no drop counted")
ok(L.uevent_emit(L.UEVENT_TYPE_USER, string.rep("x", L.UEVENT_MAX_PAYLOAD + 1), L.UEVENT_MAX_PAYLOAD + 1) == -7
   and uevent.stats().dropped_by.too_big == 1, "drop counted by reason")
res, msg, code = uevent.open("carrier-pigeon")
ok(res == nil and code == -22 and msg:find("carrier%-pigeon"), "unknown transport: nil, err, -EINVAL (" .. tostring(msg) .. ")")
ok(uevent.transport() == "file", "a refused open keeps the transport")
res, msg, code = uevent.file_reader(tmp .. "-missing.perf.data")
ok(res == nil and code == -2, "missing file: nil, err, -ENOENT (" .. tostring(msg) .. ")")
local f = io.open(tmp .. "-bad.perf.data", "wb"); f:write("NOTAFILE-but-long-enough-for-a-header"); f:close()
res, msg, code = uevent.file_reader(tmp .. "-bad.perf.data")
ok(res == nil and code == -22, "bad magic: -EINVAL")
os.remove(tmp .. "-bad.perf.data")
res, msg, code = uevent.decode(L.UEVENT_TYPE_COUNTER, "abc")
ok(res == nil and code == -22, "truncated payload: nil, err, -EINVAL")
ok(uevent.decode(0, "x\0", nil, "middle") == nil, "bad byte order name is an error")
-- a size past a string's bytes had C read past them (here: the NUL LuaJIT keeps after "hi")
local past, past_msg, past_code = uevent.decode(L.UEVENT_TYPE_TEXT, "hi", 3)
local raw_cut = uevent.decode(0x12345, "abcd", 2)
ok(past == nil and past_code == -22 and select(3, uevent.decode(L.UEVENT_TYPE_TEXT, "hi", 1e6)) == -22
   and raw_cut.data == "ab", "decode: a size past the data is nil, err, -EINVAL (" .. tostring(past_msg) .. ")")
local function slurp(p) local h = assert(io.open(p, "rb")); local s = h:read("*a"); h:close(); return s end
local cap = slurp(data .. "capture.le.perf.data")
f = io.open(tmp .. "-trunc.perf.data", "wb"); f:write(cap:sub(1, #cap - 5)); f:close()
rd = assert(uevent.file_reader(tmp .. "-trunc.perf.data"))
local r1, r2 = rd:next(), rd:next()
res, msg, code = rd:next()
ok(r1 and r2 and res == nil and code == -61, "truncated last record: nil, err, -ENODATA (" .. tostring(msg) .. ")")
rd:close(); rd:close()
res, msg = rd:next()
ok(res == nil, "close is idempotent; a closed reader refuses next")
os.remove(tmp .. "-trunc.perf.data")

-- ---- argument checks: the same whether or not anyone listens ----------------------
-- Each bad call runs with transport none (nobody listens) and with the file transport
-- (always on): it must return the same nil, err, -errno both times, and write nothing.
local T, MAXP = L.UEVENT_TYPE_USER, L.UEVENT_MAX_PAYLOAD
local arr4 = ffi.new("uint8_t[4]", { 1, 2, 3, 4 })
local bad_calls = {
  { "emit(t, \"abc\", 4000): size past the string", -22, function() return uevent.emit(T, "abc", 4000) end },
  { "emit(t, \"abc\", 4): one byte past the string", -22, function() return uevent.emit(T, "abc", 4) end },
  { "emit size -1", -22, function() return uevent.emit(T, "abc", -1) end },
  { "emit size 1.5", -22, function() return uevent.emit(T, "abc", 1.5) end },
  { "emit size nan", -22, function() return uevent.emit(T, "abc", 0 / 0) end },
  { "emit size \"3\"", -22, function() return uevent.emit(T, "abc", "3") end },
  { "emit(t, uint8_t[4], 5): past the array", -22, function() return uevent.emit(T, arr4, 5) end },
  { "emit(t, pointer) without a size", -22, function() return uevent.emit(T, ffi.cast("const char *", "abc")) end },
  { "emit(t, NULL, 3)", -14, function() return uevent.emit(T, ffi.cast("void *", nil), 3) end },
  { "emit(t, int64_t cdata)", -22, function() return uevent.emit(T, ffi.new("int64_t", 1)) end },
  { "emit(t, nil)", -22, function() return uevent.emit(T, nil) end },
  { "emit(t, 42)", -22, function() return uevent.emit(T, 42) end },
  { "emit(t, {})", -22, function() return uevent.emit(T, {}) end },
  { "emit(-1, ...)", -22, function() return uevent.emit(-1, "x") end },
  { "emit(2^32, ...)", -22, function() return uevent.emit(2 ^ 32, "x") end },
  { "emit(1.5, ...)", -22, function() return uevent.emit(1.5, "x") end },
  { "emit(nil, ...)", -22, function() return uevent.emit(nil, "x") end },
  { "emit of MAX_PAYLOAD + 1 bytes", -7, function() return uevent.emit(T, string.rep("x", MAXP + 1)) end },
  { "mark(nil)", -22, function() return uevent.mark(nil) end },
  { "mark(42)", -22, function() return uevent.mark(42) end },
  { "mark with a NUL", -22, function() return uevent.mark("a\0b") end },
  { "mark of MAX_PAYLOAD bytes", -7, function() return uevent.mark(string.rep("x", MAXP)) end },
  { "markf(nil)", -22, function() return uevent.markf(nil) end },
  { "markf(42, 1)", -22, function() return uevent.markf(42, 1) end },
  { "counter(nil, 1)", -22, function() return uevent.counter(nil, 1) end },
  { "counter(c, nan)", -22, function() return uevent.counter("c", 0 / 0) end },
  { "counter(c, 1.5)", -22, function() return uevent.counter("c", 1.5) end },
  { "counter(c, 2^63)", -22, function() return uevent.counter("c", 2 ^ 63) end },
  { "counter(c, -2^63 - 2048)", -22, function() return uevent.counter("c", -2 ^ 63 - 2048) end },
  { "counter(c, inf)", -22, function() return uevent.counter("c", math.huge) end },
  { "counter(c, \"7\")", -22, function() return uevent.counter("c", "7") end },
  { "counter(c, nil)", -22, function() return uevent.counter("c", nil) end },
  { "counter(c, 2^63 as uint64)", -22, function() return uevent.counter("c", 0x8000000000000000ULL) end },
  { "counter name with a NUL", -22, function() return uevent.counter("a\0b", 1) end },
  -- counter payload: value 8, name_len 4, pad 4, name and its NUL
  { "counter name one byte too long", -7, function() return uevent.counter(string.rep("n", MAXP - 16), 1) end },
  { "range_begin(nil)", -22, function() return uevent.range_begin(nil) end },
  { "range_begin name with a NUL", -22, function() return uevent.range_begin("a\0b") end },
  -- range_begin payload: id 8, parent 8, flags 4, name_len 4, name and its NUL
  { "range_begin name one byte too long", -7, function() return uevent.range_begin(string.rep("r", MAXP - 24)) end },
  { "async_begin(42)", -22, function() return uevent.async_begin(42) end },
  { "range_end(nil)", -22, function() return uevent.range_end(nil) end },
  { "range_end(-1)", -22, function() return uevent.range_end(-1) end },
  { "range_end(\"x\")", -22, function() return uevent.range_end("x") end },
  { "async_end(nil)", -22, function() return uevent.async_end(nil) end },
  { "async_end(1.5)", -22, function() return uevent.async_end(1.5) end },
  { "trace_context(nil, span)", -22, function() return uevent.trace_context(nil, sid) end },
  { "trace_context short trace_id", -22, function() return uevent.trace_context("short", sid) end },
  { "trace_context flags 256", -22, function() return uevent.trace_context(tid, sid, 256) end },
  { "trace_context flags -1", -22, function() return uevent.trace_context(tid, sid, -1) end },
  { "trace_context flags 0.5", -22, function() return uevent.trace_context(tid, sid, 0.5) end },
}
-- What a call returned (or raised), as one comparable string.
local function outcome(fn)
  local r = { pcall(fn) }
  if not r[1] then return "raised " .. tostring(r[2]) end
  return tostring(r[2]) .. " | " .. tostring(r[3]) .. " | " .. tostring(r[4])
end
local function filesize(p) local h = io.open(p, "rb"); if not h then return -1 end local n = h:seek("end"); h:close(); return n end
local checks = tmp .. "-checks.perf.data"
uevent.open { transport = "none", ignore_env = true }
local quiet = L.uevent_enabled_word == 0
local off, on = {}, {}
for i, c in ipairs(bad_calls) do off[i] = outcome(c[3]) end
uevent.open { transport = "file", path = checks, ignore_env = true }
local header = filesize(checks)
uevent.stats_reset()
for i, c in ipairs(bad_calls) do on[i] = outcome(c[3]) end
st = uevent.stats()
ok(filesize(checks) == header and st.emitted == 0 and st.dropped == 0,
   #bad_calls .. " refused calls write nothing, count nothing (" .. header .. " -> " .. filesize(checks) .. " bytes)")
for i, c in ipairs(bad_calls) do
  local right = on[i]:match("^nil | .* | (%-?%d+)$") == tostring(c[2])
  if quiet then
    ok(right and off[i] == on[i], c[1] .. ": the same with nobody listening (" .. on[i] .. ")")
  else
    ok(right, c[1] .. ": " .. on[i] .. " (a usdt tracer listens: no run with nobody listening)")
  end
end
res, msg, code = uevent.emit(T, "abc", 4000)
ok(res == nil and code == -22 and msg:find("4000") and filesize(checks) == header,
   "emit(t, \"abc\", 4000) with the file transport: nil, err, -EINVAL, and the file is untouched")
local ran = 0
local function range_bad() return pcall(uevent.range, "a\0b", function() ran = ran + 1 end) end
local r1 = { range_bad() }
uevent.open { transport = "none", ignore_env = true }
local r2 = { range_bad() }
ok(r1[1] == false and r2[1] == false and r1[2] == r2[2] and tostring(r1[2]):find("NUL") and ran == 0,
   "range(name with a NUL, fn) raises the same either way, and fn does not run (" .. tostring(r1[2]) .. ")")

-- What the checks let through, at their limits, is what C takes.
local st4 = ffi.new("struct { uint32_t a; uint16_t b; }", 7, 8)
local good_calls = {
  function() return uevent.emit(T, "abc", 2) end,
  function() return uevent.emit(T, "abc", 0) end,
  function() return uevent.emit(T, arr4) end,
  function() return uevent.emit(T, arr4, 2ULL) end,
  function() return uevent.emit(T, ffi.cast("const char *", "wxyz"), 3) end,
  function() return uevent.emit(T, st4) end,
  function() return uevent.emit(T + 0ULL, string.rep("x", MAXP)) end,
  function() return uevent.mark(string.rep("x", MAXP - 1)) end,
  function() return uevent.counter(string.rep("n", MAXP - 17), 2 ^ 53) end,
  function() return uevent.counter("c", -2 ^ 63) end,
  function() return uevent.counter("c", 0x7fffffffffffffffLL) end,
  function() return uevent.counter("c", 5ULL) end,
  function() return uevent.range_end(uevent.range_begin(string.rep("r", MAXP - 25))) end,
  function() return uevent.trace_context(tid, sid) end,
}
off, on = {}, {}
for i, fn in ipairs(good_calls) do off[i] = outcome(fn) end
uevent.open { transport = "file", path = checks, ignore_env = true }
for i, fn in ipairs(good_calls) do on[i] = outcome(fn) end
local all_true = true
for i = 1, #good_calls do
  if off[i] ~= "true | nil | nil" or on[i] ~= off[i] then all_true = false; diag(i .. ": " .. off[i] .. " / " .. on[i]) end
end
ok(all_true, #good_calls .. " calls at the limits pass, nobody listening and listening")
rd = assert(uevent.file_reader(checks))
recs = {}
for rec in rd:records() do recs[#recs + 1] = rec end
rd:close()
ok(#recs == 15 and recs[1].data == "ab" and recs[2].data == "" and recs[3].data == "\1\2\3\4" and recs[4].data == "\1\2"
   and recs[5].data == "wxy" and #recs[6].data == ffi.sizeof(st4) and recs[7].data == string.rep("x", MAXP)
   and recs[8].payload.text == string.rep("x", MAXP - 1)
   and recs[9].payload.name == string.rep("n", MAXP - 17) and recs[9].payload.value == 2 ^ 53
   and recs[10].payload.value == -0x8000000000000000LL and recs[11].payload.value == 0x7fffffffffffffffLL
   and recs[12].payload.value == 5 and recs[13].payload.name == string.rep("r", MAXP - 25)
   and recs[14].payload.kind == "range_end" and recs[15].payload.kind == "trace_context",
   "they are recorded as given (" .. #recs .. " records)")
os.remove(checks)

-- ---- golden files ----------------------------------------------------------------
local seen = {}
local function gold(name, tag)
  local fn = name .. "." .. tag .. (name == "capture" and ".perf.data" or ".bin")
  seen[fn] = true
  return slurp(data .. fn)
end
local U = 0x7F0000001000ULL
for _, tb in ipairs { { "le", "little" }, { "be", "big" } } do
  local tag, bo = tb[1], tb[2]
  local d = function(t, name) return assert(uevent.decode(t, gold(name, tag), nil, bo)) end
  local x = d(L.UEVENT_TYPE_TEXT, "text")
  ok(x.text == "hello, perf", "golden text." .. tag)
  x = d(L.UEVENT_TYPE_RANGE_BEGIN, "range_begin")
  ok(x.id == 0x1122334455667788ULL and x.parent == 0x42 and x.flags == 1 and x.name == "parse", "golden range_begin." .. tag)
  x = d(L.UEVENT_TYPE_RANGE_END, "range_end")
  ok(x.id == 0x1122334455667788ULL and x.flags == 1, "golden range_end." .. tag)
  x = d(L.UEVENT_TYPE_COUNTER, "counter")
  ok(x.name == "queue_depth" and x.value == -12345, "golden counter." .. tag)
  x = d(L.UEVENT_TYPE_JIT_CODE_LOAD, "jit_code_load")
  ok(x.code_addr == U and x.code_size == 0x80 and x.code_index == 7 and x.name == "TRACE_12 app.lua:34", "golden jit_code_load." .. tag)
  x = d(L.UEVENT_TYPE_JIT_CODE_MOVE, "jit_code_move")
  ok(x.code_index == 7 and x.old_addr == U and x.new_addr == 0x7F0000002000ULL and x.code_size == 0x80, "golden jit_code_move." .. tag)
  x = d(L.UEVENT_TYPE_JIT_CODE_UNLOAD, "jit_code_unload")
  ok(x.code_addr == 0x7F0000002000ULL and x.code_size == 0x80 and x.code_index == 7, "golden jit_code_unload." .. tag)
  x = d(L.UEVENT_TYPE_JIT_DEBUG_INFO, "jit_debug_info")
  local e = x.entries
  ok(x.code_addr == U and #e == 2 and e[1].addr == U and e[1].line == 34 and e[1].discrim == 0 and e[1].file == "app.lua"
     and e[2].addr == 0x7F0000001010ULL and e[2].line == 35 and e[2].discrim == 1 and e[2].file == "app.lua",
     "golden jit_debug_info." .. tag)
  x = d(L.UEVENT_TYPE_TRACE_CONTEXT, "trace_context")
  ok(x.trace_id == tid and x.span_id == sid and x.flags == 1, "golden trace_context." .. tag)
  local sample_type = 6 -- PERF_SAMPLE_TID | PERF_SAMPLE_TIME
  x = assert(uevent.decode_record(gold("record_v1", tag), bo, sample_type))
  ok(x.record_type == 63 and x.format == 1 and x.type == 0 and x.data == "hello, perf\0" and x.payload.text == "hello, perf"
     and x.pid == 100 and x.tid == 101 and x.time == 123456789 and x.cpu == nil, "golden record_v1." .. tag)
  x = assert(uevent.decode_record(gold("record_v0", tag), bo, sample_type, true))
  ok(x.record_type == 11 and x.format == 0 and x.data == "hello, perf\0" and x.tid == 101, "golden record_v0." .. tag .. " (V0 layout)")
  gold("capture", tag)
  rd = assert(uevent.file_reader(data .. "capture." .. tag .. ".perf.data"))
  local rs = {}
  for rec in rd:records() do rs[#rs + 1] = rec end
  ok(#rs == 3 and rs[1].time == 1000 and rs[2].time == 2000 and rs[3].time == 3000 and rs[1].payload.text == "hello, perf"
     and rs[2].type == L.UEVENT_TYPE_COUNTER and rs[2].tid == 102 and rs[2].payload.value == -12345
     and rs[3].payload.name == "parse" and rs[3].payload.id == 0x1122334455667788ULL,
     "golden capture." .. tag .. ".perf.data: 3 records, payloads in the file's byte order")
end
res, msg, code = uevent.decode_record(gold("record_v1", "le"), "little", 0)
ok(res == nil and code == -22, "record with a disagreeing sample_type is refused")
local bad = gold("record_v1", "le")
bad = bad:sub(1, 8) .. "\9" .. bad:sub(10)
res, msg, code = uevent.decode_record(bad, "little", 6)
ok(res == nil and code == -71, "unknown record format is -EPROTO")
local all, missing = true, {}
local ls = io.popen("ls '" .. data .. "'")
for fn in ls:lines() do
  -- (captures, *.perf.data, are test_reader.lua's: each agrees with uevent dump --json)
  if fn:match("%.bin$") and not seen[fn] then
    -- perf_records.* and ring.* are the reader API's: test_reader.lua decodes them.
    if fn:match("^perf_records%.") or fn:match("^ring%.") then
      diag("decoded by test_reader.lua: " .. fn)
    else
      all = false; missing[#missing + 1] = fn
    end
  end
end
ls:close()
ok(all, "every golden file is decoded (" .. table.concat(missing, " ") .. ")")

-- ---- GC closes descriptors -------------------------------------------------------
-- Counted in-process with fcntl: listing /proc/PID/fd through popen races with the
-- pipe popen itself opens.
pcall(ffi.cdef, "int fcntl(int fd, int cmd, ...);")
local function nfds()
  local c = 0
  for fd = 0, 4095 do
    if ffi.C.fcntl(fd, 1) >= 0 then c = c + 1 end -- F_GETFD
  end
  return c
end
collectgarbage(); collectgarbage()
local fds = nfds()
for i = 1, 10000 do
  local h = assert(uevent.file_reader(data .. "capture.le.perf.data"))
  h:next()
end
collectgarbage(); collectgarbage()
local after = nfds()
ok(after == fds, "10000 file readers dropped without close: no fd leak (" .. fds .. " -> " .. after .. ")")
for i = 1, 1000 do
  local h = assert(uevent.file_reader(data .. "capture.le.perf.data"))
  h:close()
  h = nil
end
collectgarbage(); collectgarbage()
local after2 = nfds()
ok(after2 == fds, "1000 closed-then-collected readers: __gc after close is harmless (" .. fds .. " -> " .. after2 .. ")")

-- ---- the JIT keeps a marking loop compiled -------------------------------------------
local jv = require "jit.v"
local log = tmp .. ".jv"
local function jit_loop(label)
  jit.flush()
  jv.start(log)
  local mark = uevent.mark
  for i = 1, 20000 do mark("loop") end
  jv.off()
  local text = slurp(log)
  os.remove(log)
  for l in text:gmatch("[^\n]+") do diag(label .. ": " .. l) end
  local compiled = text:find("TRACE%s+%d+ [^\n]*test_uevent%.lua:%d+ loop") ~= nil
  local aborted = text:find("abort") or text:find("NYI")
  return compiled and not aborted
end
if jit and jit.status() then
  uevent.open { transport = "none", ignore_env = true }
  ok(jit_loop("disabled"), "jit -jv: a loop of disabled marks compiles to a trace, no NYI/abort")
  uevent.open { transport = "file", path = path, ignore_env = true }
  ok(jit_loop("enabled"), "jit -jv: a loop of enabled marks (FFI call) compiles, no NYI/abort")
else
  tap.skip(2, "JIT disabled")
end

-- the reason channel: a refused open says why on this thread
local r0, e0 = uevent.open { transport = "file", path = "/nonexistent-dir/x.perf.data", ignore_env = true }
ok(r0 == nil and uevent.reason():find("nonexistent-dir", 1, true) ~= nil,
   "a refused open: reason() says why (" .. uevent.reason() .. ")")

os.remove(path)
tap.done(true)
