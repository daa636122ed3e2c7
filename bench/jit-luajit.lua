-- jit-luajit.lua - overhead of the uevent.jit hook on LuaJIT, hook on vs off in one run:
-- a trace-heavy workload (many short traces) and a steady-state hot loop.
local J = require "uevent.jit"
local clock = os.clock

-- Trace-heavy: N fresh chunks, each with its own loop, run just past the hot-loop
-- threshold, so nearly all the time is recording + compiling + (with the hook) announcing.
local N = tonumber(os.getenv("BENCH_TRACES")) or 600
local chunks = {}
local function make_chunks()
  for i = 1, N do
    chunks[i] = assert(loadstring(("local s = %d; for i = 1, 300 do s = s + i * %d %% 7 end; return s"):format(i, i)))
  end
end
local function trace_heavy()
  jit.flush()
  make_chunks()              -- fresh prototypes: every round compiles every trace again
  collectgarbage()
  local t = clock()
  for i = 1, N do chunks[i]() end
  return clock() - t
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
-- Interleave off/on so drift on a shared machine hits both alike.
local off_h, on_h, off_s, on_s = math.huge, math.huge, math.huge, math.huge
for _ = 1, 7 do
  off_h = math.min(off_h, best(trace_heavy, 1, false))
  on_h = math.min(on_h, best(trace_heavy, 1, true, fresh()))
end
for _ = 1, 3 do
  off_s = math.min(off_s, best(steady, 1, false))
  on_s = math.min(on_s, best(steady, 1, true, fresh()))
end
print(("luajit trace-heavy (%d traces)   off %8.2f ms  on %8.2f ms  overhead %+6.2f%%  (%.1f us/trace)")
  :format(N, off_h * 1e3, on_h * 1e3, (on_h / off_h - 1) * 100, (on_h - off_h) / N * 1e6))
print(("luajit steady state (3e8 iter)  off %8.2f ms  on %8.2f ms  overhead %+6.2f%%")
  :format(off_s * 1e3, on_s * 1e3, (on_s / off_s - 1) * 100))
