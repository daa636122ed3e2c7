-- jit-luajit-ab.lua - the LuaJIT hook with two builds of libuevent, A against B, in one
-- process: what a change to the library's per-load path saves a trace, where the whole
-- benchmark (jit-luajit.lua) cannot see it for the noise between runs.
--
--   GLIBC_TUNABLES=glibc.rtld.optional_static_tls=8192 \
--   LUA_PATH="bindings/lua/?.lua;;" LUA_CPATH="bindings/lua/?.so;;" \
--   UEVENT_LIB=libuevent/.libs/libuevent.so luajit bench/jit-luajit-ab.lua A.so B.so TMPDIR \
--   [ROUNDS [ITERS]]
--
-- A.so and B.so: copies of libuevent.so.0 from the two builds (different paths). Both are
-- loaded into one process, so each needs its static TLS (libuevent's thread context is
-- initial-exec): the tunable makes room for the second. The hook's C handler is bound
-- to A's session in some rounds and B's in others (jit-workload.lua's chunks, ITERS
-- iterations: 300 the stress case, 20000 trace-heavy; the order rotates each round,
-- with rounds of no hook between), and the per-round difference A - B is taken a trace.
-- The copy loaded first usually runs faster, whatever it holds (in 24 pairs of runs
-- here: faster in 20, by 0.08 us a trace at the median, from -0.06 to 0.19), so the
-- script runs itself twice, loading A first and then B first, and reports the
-- difference with that bias cancelled: ((A - B | A first) - (B - A | B first)) / 2.
local ffi = require "ffi"
local bit = require "bit"

local a_path, b_path, dir = arg[1], arg[2], arg[3]
assert(a_path and b_path and dir, "usage: jit-luajit-ab.lua A.so B.so TMPDIR [ROUNDS [ITERS]]")
local ROUNDS, ITERS = tonumber(arg[4]) or 61, tonumber(arg[5]) or 300
local N = 600
local here = ((arg[0] or ""):match("^(.*)/") or ".")

if os.getenv("UEVENT_AB_CHILD") then
  require "uevent"     -- the C declarations, from the binding
  local core = require "uevent.jit_core"
  local jutil = require "jit.util"
  local workload = dofile(here .. "/jit-workload.lua")
  local libs = { ffi.load(a_path), ffi.load(b_path) }   -- loaded in this order
  local h, handler = core.new(jutil.tracemc, jutil.funcinfo)
  local function addr(p) return tonumber(ffi.cast("uintptr_t", p)) end
  local k, sess = 0, nil
  local flush     -- the bound session's flush, inside the timed part: the round's writes
  local function hook(L)
    return function()
      k = k + 1
      local o = ffi.new("struct uevent_jit_opts")
      o.sz = ffi.sizeof(o)
      o.dir = dir .. "/jd" .. k
      o.perf_map_path = dir .. "/perf.map"
      o.flags = bit.bor(L.UEVENT_JIT_BUFFER_PERF_MAP, L.UEVENT_JIT_BUFFER_JITDUMP)
      sess = L.uevent_jit__open(o)
      assert(sess ~= nil, "uevent_jit__open failed")
      core.bind(h, addr(sess), addr(L.uevent_jit__code_load), addr(L.uevent_jit__code_load_func),
                addr(L.uevent_jit__code_unload), addr(L.uevent_jit__code_unload_all), true)
      jit.attach(handler, "trace")
      flush = function() assert(L.uevent_jit__flush(sess) == 0) end
    end, function()
      flush = nil
      jit.attach(handler)
      core.bind(h)
      L.uevent_jit__close(sess)
    end
  end
  local parts = { { "first", hook(libs[1]) }, { "second", hook(libs[2]) }, { "off" } }
  local times, ntr = workload.rotate(parts, ROUNDS, N, ITERS, {
    loaded = function() return (core.counts(h)) end,
    flush = function() return flush end,
    counted = "first",
    between = function() os.execute("rm -rf '" .. dir .. "'/jd*") end,
  })
  local function median(t)
    local s = {}
    for i, v in ipairs(t) do s[i] = v end
    table.sort(s)
    return (s[math.floor((#s + 1) / 2)] + s[math.ceil((#s + 1) / 2)]) / 2
  end
  local d = {}
  for i = 1, #times.first do d[i] = (times.first[i] - times.second[i]) / ntr * 1e6 end
  local off = median(times.off)
  print(("%d %.4f %.4f %.4f"):format(ntr, median(d), (median(times.first) - off) / ntr * 1e6,
                                     (median(times.second) - off) / ntr * 1e6))
  os.exit(0)
end

local function run(first, second)
  local cmd = ("UEVENT_AB_CHILD=1 '%s' '%s' '%s' '%s' '%s' %d %d"):format(
    arg[-1] or "luajit", arg[0], first, second, dir, ROUNDS, ITERS)
  local f = assert(io.popen(cmd))
  local out = f:read("*a")
  f:close()
  local ntr, d, t1, t2 = out:match("^(%d+) (%S+) (%S+) (%S+)")
  assert(ntr, "child failed: " .. out)
  return tonumber(d), tonumber(t1), tonumber(t2), tonumber(ntr)
end
local d1, a1, b1, n = run(a_path, b_path)    -- A - B, A loaded first
local d2, b2, a2 = run(b_path, a_path)       -- B - A, B loaded first
print(("# %d rounds, %d traces a round, %d iterations; us a trace over no hook, medians"):format(
  ROUNDS, n, ITERS))
print(("A first:  A %.2f  B %.2f  A - B (paired) %+.3f"):format(a1, b1, d1))
print(("B first:  A %.2f  B %.2f  B - A (paired) %+.3f"):format(a2, b2, d2))
print(("A - B with the load-order bias (%+.3f) cancelled: %+.3f us a trace"):format(
  (d1 + d2) / 2, (d1 - d2) / 2))
