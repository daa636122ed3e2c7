-- jit-luajit-parts.lua - where the LuaJIT hook's cost a trace goes, part by part, in one run.
--
--   LUA_PATH="bindings/lua/?.lua;;" LUA_CPATH="bindings/lua/?.so;;" \
--   UEVENT_LIB=libuevent/.libs/libuevent.so luajit bench/jit-luajit-parts.lua TMPDIR [ROUNDS]
--
-- The stress workload of jit-luajit.lua (600 fresh chunks, 300 iterations: nearly all
-- compiling) run with each of these in turn, the order rotating every round, and
-- reported as the median of the round times less the median with no hook, a trace:
--   floor     jit-luajit.lua's floor (tracemc, funcinfo once per start; a Lua handler)
--   cstub     the hook's C handler calling a stub for each library call (its own work)
--   nooutput  the hook with no jitdump, no perf map, no uevent (the library's bookkeeping)
--   nomap     the hook without the perf map       nojitdump  ... without the jitdump
--   hook      the hook as it starts by default
-- A diagnostic for jit-luajit.lua's "share" line: each part here is a difference of
-- medians, not a paired ratio with an interval.
local J = require "uevent.jit"
local core = require "uevent.jit_core"
local ffi = require "ffi"
local jutil = require "jit.util"
local tracemc, funcinfo = jutil.tracemc, jutil.funcinfo

local dir = assert(arg[1], "usage: jit-luajit-parts.lua TMPDIR [ROUNDS]")
local ROUNDS = tonumber(arg[2]) or 61
local N, ITERS = 600, 300

local here = ((arg[0] or ""):match("^(.*)/") or ".")
local floor_handler = dofile(here .. "/jit-floor.lua")
local workload = dofile(here .. "/jit-workload.lua")

local k = 0
local function hook(opts)
  return function()
    k = k + 1
    opts.dir, opts.perf_map_path = dir .. "/jd" .. k, dir .. "/perf.map"
    assert(J.start(opts))
  end, J.stop
end
-- The stub: an exported function of the library that only returns (its nonzero result
-- counts as a failed load, which costs the handler nothing more).
local stub = tonumber(ffi.cast("uintptr_t", require("uevent").lib.uevent_max_payload))
local sh, shandler = core.new(tracemc, funcinfo)
local parts = {
  { "floor", function() jit.attach(floor_handler, "trace") end,
    function() jit.attach(floor_handler) end },
  { "cstub", function() core.bind(sh, 4096, stub, stub, stub, stub, true)
                        jit.attach(shandler, "trace") end,
    function() jit.attach(shandler); core.bind(sh) end },
  { "nooutput", hook { jitdump = false, perf_map = false, uevent = false } },
  { "nomap", hook { perf_map = false } },
  { "nojitdump", hook { jitdump = false } },
  { "hook", hook {} },
  { "off" },
}

local times, ntr = workload.rotate(parts, ROUNDS, N, ITERS, {
  loaded = function() return J.counts.loaded end,
  flush = function() return J.running() and function() assert(J.flush()) end end,
  counted = "hook",
  between = function() os.execute("rm -rf '" .. dir .. "'/jd*") end,
})
local function median(t) table.sort(t); return (t[math.floor((#t + 1) / 2)] + t[math.ceil((#t + 1) / 2)]) / 2 end
local off = median(times.off)
print(("# %d rounds, %d traces a round; median CPU time less the median with no hook (%.2f ms), a trace")
  :format(ROUNDS, ntr, off * 1e3))
for _, p in ipairs(parts) do
  if p[1] ~= "off" then
    print(("%-10s %6.2f us"):format(p[1], (median(times[p[1]]) - off) / ntr * 1e6))
  end
end
