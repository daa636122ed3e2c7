-- jit-luajit.lua - overhead of the uevent.jit hook on LuaJIT, hook on vs off in one run:
-- a trace-heavy workload (many short traces) and a steady-state hot loop.
--
-- Each workload runs in rounds that alternate hook off / hook on (so drift on a shared
-- machine hits both alike); a round's time is CPU time (os.clock: the hook's syscalls
-- count), the result is the median of each side and their ratio. The first pair is a
-- warm-up and is dropped. Traces compiled per round are counted
-- round (the traces the hook announced, and LuaJIT's own flushes: past 1000 traces it
-- drops them all), so "trace-heavy" is a measured fact, not a name.
local J = require "uevent.jit"
local clock = os.clock

local N = tonumber(os.getenv("BENCH_TRACES")) or 600
local ROUNDS = tonumber(os.getenv("BENCH_ROUNDS")) or 15

local function median(t)
  local s = {}
  for i = 1, #t do s[i] = t[i] end
  table.sort(s)
  local m = #s
  return m % 2 == 1 and s[(m + 1) / 2] or (s[m / 2] + s[m / 2 + 1]) / 2
end

-- Trace-heavy: N fresh chunks, each with its own loop, so every round records and
-- compiles new traces (a root trace per loop plus side traces for its branch) and,
-- with the hook, announces each. ITERS sets how long each trace then runs: 300 is the
-- worst case (time is nearly all compiling: tiny traces, barely used); 20000 is a
-- program whose many traces each do some work.
local SRC = [[
local t, s = {}, %d
for i = 1, %d do
  local k = i %% 16 + 1
  t[k] = (t[k] or 0) + i * %d
  if t[k] %% 3 == 0 then s = s + k else s = s - 1 end
end
return s]]
local chunks = {}
local function trace_heavy(iters)
  return function()
    jit.flush()
    for i = 1, N do chunks[i] = assert(loadstring(SRC:format(i, iters, i), "=heavy.lua")) end
    collectgarbage()
    local t = clock()
    for i = 1, N do chunks[i]() end
    return clock() - t
  end
end

local STEADY = tonumber(os.getenv("BENCH_STEADY")) or 1e8
local function steady()
  jit.flush()
  collectgarbage()
  local s, t = 0, clock()
  for i = 1, STEADY do s = s + i % 7 end
  return clock() - t
end

local dir = assert(arg[1], "usage: jit-luajit.lua TMPDIR")
local k = 0
local function fresh() -- one jit-PID.dump per directory: each session gets its own
  k = k + 1
  return { dir = dir .. "/jd" .. k, perf_map_path = dir .. "/perf.map" }
end

local function compare(f, rounds)
  local off, on, ntr, nfl = {}, {}, {}, {}
  for r = 0, rounds do
    local t0 = f()
    assert(J.start(fresh()))
    local c = J.counts
    local l0, f0 = c.loaded, c.flushes
    local t1 = f()
    local n, fl = c.loaded - l0, c.flushes - f0
    J.stop()
    if r > 0 then
      off[#off + 1], on[#on + 1], ntr[#ntr + 1], nfl[#nfl + 1] = t0, t1, n, fl
    end
  end
  return median(off), median(on), median(ntr), median(nfl)
end

for _, iters in ipairs { 300, 20000 } do
  local off, on, ntr, nfl = compare(trace_heavy(iters), ROUNDS)
  print(("luajit trace-heavy %d chunks x %5d iter: %4d traces, %d flushes/round  off %7.2f ms  on %7.2f ms  overhead %+6.2f%%  (%.2f us/trace)")
    :format(N, iters, ntr, nfl, off * 1e3, on * 1e3, (on / off - 1) * 100,
            (on - off) / ntr * 1e6))
end
local off, on, ntr = compare(steady, 7)
print(("luajit steady state (%.0e iter): %d traces                    off %7.2f ms  on %7.2f ms  overhead %+6.2f%%")
  :format(STEADY, ntr, off * 1e3, on * 1e3, (on / off - 1) * 100))
print(("# medians of %d alternating off/on rounds (7 for steady state), CPU time; targets: trace-heavy <= 10%%, steady < 1%%")
  :format(ROUNDS))
