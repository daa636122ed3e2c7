-- test_jit.lua - TAP tests of uevent.jit without perf: what the hook writes for traces.
-- usage: luajit test_jit.lua TMPDIR
local ffi = require "ffi"
local jutil = require "jit.util"
local tmp = assert(arg[1], "usage: test_jit.lua TMPDIR")

local tap = require "tests.tap"
local ok, skip = tap.ok, tap.skip
tap.plan(25)

local have_uevent, uevent = pcall(require, "uevent")
local uev_path = tmp .. "/lua.perf.data"
if have_uevent then
  assert(uevent.open { transport = "file", path = uev_path, ignore_env = true })
end

-- Count jit.util.funcinfo calls (uevent.jit looks it up when it is loaded).
local funcinfo0, nfuncinfo = jutil.funcinfo, 0
jutil.funcinfo = function(...) nfuncinfo = nfuncinfo + 1; return funcinfo0(...) end
local J = require "uevent.jit"
jutil.funcinfo = funcinfo0
local map = tmp .. "/lua.map"
-- jitdump_buffered = false: each record is in the file before its trace runs, so this
-- test can read the dump while the session is open (the default batches them).
ok(J.start { dir = tmp .. "/jd", perf_map_path = map, jitdump_buffered = false },
   "start() with dir and perf-map overrides")
print("# C declarations via " .. J.via())
local dump = J.dump_path()
ok(dump and dump:match("/jd/jit%-%d+%.dump$"), "dump path " .. tostring(dump))

local function loop1(k) local s = 0; for i = 1, k do s = s + i % 3 end; return s end
local LINE = debug.getinfo(loop1, "S").linedefined
local PAT = "^TRACE_%d+ loop1 test_jit%.lua:" .. LINE .. "$"
for _ = 1, 3 do loop1(10000) end
ok(J.counts.loaded >= 1 and J.counts.errors == 0, "a trace was announced (" .. J.counts.loaded .. ")")

-- Parse the dump: load records with their address, size, name.
local function loads(path)
  local f = assert(io.open(path or dump, "rb")); local s = f:read("*a"); f:close()
  local p = ffi.cast("const uint8_t *", s)
  local out, off = {}, 40
  while off + 16 <= #s do
    local id = ffi.cast("const uint32_t *", p + off)[0]
    local size = ffi.cast("const uint32_t *", p + off)[1]
    if size < 16 then break end
    if id == 0 then
      local q = ffi.cast("const uint64_t *", p + off + 24)
      out[#out + 1] = { addr = tonumber(q[1]), size = tonumber(q[2]), name = ffi.string(p + off + 56) }
    end
    off = off + size
  end
  return out, #s, off, s
end
-- A loop in a main chunk: a chunk has no name, so the trace is "TRACE_n chunk.lua:1".
assert(loadstring("local s = 0 for i = 1, 100000 do s = s + i % 5 end return s", "=chunk.lua"))()

local l, len, off, s = loads()
-- while the session is open the file ends in the zeros of its reserved space
ok(off == len or not s:sub(off + 1):find("[^%z]"),
   "dump is whole records, then zeros (" .. off .. " of " .. len .. " bytes)")
local found
for _, r in ipairs(l) do if r.name:match(PAT) then found = r end end
ok(found, "loop trace named TRACE_n loop1 test_jit.lua:" .. LINE .. (found and (" (" .. found.name .. ")") or ""))
local chunkname
for _, r in ipairs(l) do if r.name:match("chunk%.lua") then chunkname = r.name end end
ok(chunkname and chunkname:match("^TRACE_%d+ chunk%.lua:1$"),
   "a main chunk's trace has no function name (" .. tostring(chunkname) .. ")")
local tr = found and tonumber(found.name:match("^TRACE_(%d+)"))
local mc, addr = nil, nil
if tr then mc, addr = jutil.tracemc(tr) end
ok(found and addr == found.addr and #mc == found.size, "address and size are tracemc()'s")

-- flush: every announced trace is unloaded; new traces are announced again.
local before = J.counts.loaded
jit.flush()
ok(J.counts.unloaded == before, "jit.flush() unloads all " .. before .. " traces (" .. J.counts.unloaded .. ")")
local fi_before = nfuncinfo
for _ = 1, 3 do loop1(10000) end
local fi_after, loaded_after = nfuncinfo, J.counts.loaded
ok(loaded_after > before, "traces after the flush announced again")
-- The same loop compiled again: same name, and its line comes from the hook's cache.
local again = 0
for i, r in ipairs(loads()) do if i > #l and r.name:match(PAT) then again = again + 1 end end
ok(again >= 1, "the loop's new trace is named TRACE_n loop1 test_jit.lua:" .. LINE .. " again ("
   .. again .. ")")
-- The root trace starts where it did before the flush: served from the cache. A side
-- trace may start at an exit not seen before, which asks funcinfo once.
ok(fi_after - fi_before < loaded_after - before, "without asking jit.util.funcinfo again ("
   .. (fi_after - fi_before) .. " calls for " .. (loaded_after - before) .. " traces)")

if have_uevent then
  J.stop(); uevent.close()
  local seen_load, seen_unload = false, false
  local rd = uevent.file_reader(uev_path)
  for rec in rd:records() do
    if rec.type == 4 and rec.payload and tostring(rec.payload.name):match(PAT) then seen_load = true end
    if rec.type == 6 then seen_unload = true end
  end
  ok(seen_load, "uevent JIT_CODE_LOAD marker with the trace name")
  ok(seen_unload, "uevent JIT_CODE_UNLOAD marker after the flush")
else
  J.stop()
  skip(2, "LuaJIT binding (require 'uevent') not available")
end

-- The hook batches perf-map lines (UEVENT_JIT_BUFFER_PERF_MAP); stop() writes them.
local f = io.open(map); local mtxt = f and f:read("*a") or ""; if f then f:close() end
ok(found and mtxt:find(("%x %x %s\n"):format(found.addr, found.size, found.name), 1, true),
   "perf-map line for the trace, written by stop()")

-- stop() detaches: later traces are not announced.
ok(not J.running(), "stop() ends the session")
local c = J.counts.loaded
local function loop2(k) local s = 1; for i = 1, k do s = s * 3 % 1000003 end; return s end
for _ = 1, 3 do loop2(10000) end
ok(J.counts.loaded == c, "no announcements after stop()")
ok(J.start { dir = tmp .. "/jd2", perf_map = false } and J.stop(), "start() again after stop()")

-- The default: jitdump records batched in memory, in the file after stop().
J.start { dir = tmp .. "/jd3", perf_map = false }
local dump3 = J.dump_path()
local function loop3(k) local s = 2; for i = 1, k do s = (s * 5 + i) % 65521 end; return s end
for _ = 1, 3 do loop3(10000) end
local during = #select(1, loads(dump3))
local fl_ok, fl_err = J.flush()
local flushed = #select(1, loads(dump3))
J.stop()
local named = false
for _, r in ipairs(loads(dump3)) do
  if r.name:match("^TRACE_%d+ loop3 test_jit%.lua:%d+$") then named = true end
end
ok(during == 0 and named, "buffered jitdump (the default): no load in the file while running ("
   .. during .. "), TRACE_n loop3 test_jit.lua:N after stop()")
ok(fl_ok and flushed >= 1 and select(2, J.flush()) == "uevent.jit: not running",
   "flush() writes the batch while running (" .. flushed .. " loads; " .. tostring(fl_err)
   .. "); after stop() it says it is not running")

-- Traces found at start() are announced without a location, even one whose number an
-- attempt aborted while the hook ran had (it took that function's name and line).
local function A5()           -- aborts (FNEW is NYI)
  local n = 0
  for i = 1, 2000 do local g = function() return i end; n = n + g() end
  return n
end
local o5 = { perf_map_buffered = false, jitdump = false, uevent = false }
jit.flush()
o5.perf_map_path = tmp .. "/m5a.map"; J.start(o5)
A5()
J.stop()
local s5 = 0
for i = 1, 100000 do s5 = s5 + i % 3 end   -- compiled while stopped
o5.perf_map_path = tmp .. "/m5b.map"; J.start(o5)
J.stop()
local n5, located = 0, {}
for l in io.lines(tmp .. "/m5b.map") do
  n5 = n5 + 1
  if not l:match("^%x+ %x+ TRACE_%d+$") then located[#located + 1] = l:match("TRACE.*") end
end
ok(n5 >= 1 and #located == 0, "traces found at start() have no location (" .. n5 .. " traces"
   .. (#located > 0 and ", not: " .. table.concat(located, ", ") or "") .. ")")

-- A hook that cannot start raises (a one-liner must not drop a nil, err) and says why.
local f2 = io.open(tmp .. "/afile", "w"); f2:write("x"); f2:close()
local ok2, err2 = pcall(J.start, { dir = tmp .. "/afile/jd" })
ok(not ok2 and tostring(err2):match("uevent%.jit: cannot start: .*afile") and not J.running(),
   "start() raises when the jitdump directory cannot be made: " .. tostring(err2))

-- jit/uevent.lua, what `luajit -juevent=...` calls: its options, and bad ones refused.
local JU = require "jit.uevent"
local o = JU.parse("dir=/x/y", "map=/m.map", "nojitdump", "nouevent", "nolines", "unbuffered")
ok(o.dir == "/x/y" and o.perf_map_path == "/m.map" and o.jitdump == false and o.uevent == false
   and o.lines == false and o.perf_map_buffered == false and o.jitdump_buffered == false
   and JU.parse("nomap").perf_map == false,
   "-juevent options: dir=, map=, nomap, nojitdump, nouevent, nolines, unbuffered")
local bad1, e1 = pcall(JU.parse, "bogus")
local bad2, e2 = pcall(JU.parse, "dir=")
ok(not bad1 and e1:match("unknown option 'bogus'") and not bad2 and e2:match("needs a value"),
   "-juevent refuses an unknown option and an empty value: " .. tostring(e1))

-- The running hook holds its session: a program that drops the module and collects keeps
-- its traces announced (the session's finalizer closed it under the attached handler,
-- whose next trace called into the freed session: a crash or a hang, so in a child).
local here = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
local child = io.popen(("timeout 60 '%s' '%sjit_drop.lua' '%s' 2>&1; echo \"exit $?\""):format(
  arg[-1] or "luajit", here, tmp))
local out = child:read("*a"); child:close()
local line4 = out:match("line (%d+)")
local PAT4 = "TRACE_%d+ loop4 jit_drop%.lua:" .. tostring(line4)
local f4 = io.open(tmp .. "/drop.map"); local m4 = f4 and f4:read("*a") or ""; if f4 then f4:close() end
ok(out:match("exit 0\n$") and m4:find("%x+ %x+ " .. PAT4 .. "\n"), "module dropped and collected: "
   .. "the hook still announces traces (perf map: " .. (m4:match(PAT4) or "none") .. "; "
   .. out:gsub("\n", "; ") .. ")")
ok(out:match("closed yes"), "then its handler replaced: the session collected and closed")
tap.done()
