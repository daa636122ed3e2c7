-- jit-luajit.lua - overhead of the uevent.jit hook on LuaJIT, hook on vs off in one run:
-- a trace-heavy workload (many short traces) and a steady-state hot loop.
local J = require "uevent.jit"
local clock = os.clock

-- Trace-heavy: N fresh chunks, each with its own loop, so every round records and
-- compiles N new traces (and, with the hook, announces them). ITERS sets how long each
-- trace then runs: 300 is the worst case (time is nearly all compiling: tiny traces,
-- barely used); 20000 is a program whose many traces each do some work.
local N = tonumber(os.getenv("BENCH_TRACES")) or 600
local chunks = {}
local SRC = [[
local t, s = {}, %d
for i = 1, %d do
  local k = i %% 16 + 1
  t[k] = (t[k] or 0) + i * %d
  if t[k] %% 3 == 0 then s = s + k else s = s - 1 end
end
return s]]
local function trace_heavy(iters)
  return function()
    jit.flush()
    for i = 1, N do chunks[i] = assert(loadstring(SRC:format(i, iters, i))) end
    collectgarbage()
    local t = clock()
    for i = 1, N do chunks[i]() end
    return clock() - t
  end
end

local function steady()
  local s, t = 0, clock()
  for i = 1, 3e8 do s = s + i % 7 end
  return clock() - t, s
end

local function best(f, rounds, hook, opts)
  local m = math.huge
  for _ = 1, rounds do
    if hook then assert(J.start(opts)) end
    local dt = f()
    if hook then J.stop() end
    if dt < m then m = dt end
  end
  return m
end

local dir = assert(arg[1], "usage: jit-luajit.lua TMPDIR")
local k = 0
local function fresh() -- one jit-PID.dump per directory: each session gets its own
  k = k + 1
  return { dir = dir .. "/jd" .. k, perf_map_path = dir .. "/perf.map" }
end
-- Interleave off/on so drift on a shared machine hits both alike; keep the best of each.
local function compare(f, rounds)
  local off, on = math.huge, math.huge
  for _ = 1, rounds do
    off = math.min(off, best(f, 1, false))
    on = math.min(on, best(f, 1, true, fresh()))
  end
  return off, on
end
local traces0 = J.counts.loaded
for _, iters in ipairs { 300, 20000 } do
  local off, on = compare(trace_heavy(iters), 9)
  print(("luajit trace-heavy %4d traces x %5d iter  off %8.2f ms  on %8.2f ms  overhead %+6.2f%%  (%.2f us/trace)")
    :format(N, iters, off * 1e3, on * 1e3, (on / off - 1) * 100, (on - off) / N * 1e6))
end
local off, on = compare(steady, 3)
print(("luajit steady state (3e8 iter)           off %8.2f ms  on %8.2f ms  overhead %+6.2f%%")
  :format(off * 1e3, on * 1e3, (on / off - 1) * 100))
print(("# %d traces announced with the hook on"):format(J.counts.loaded - traces0))
