-- jit-luajit.lua - overhead of the uevent.jit hook on LuaJIT, hook on vs off in one run:
-- a trace-heavy workload (many short traces, each doing some work), a compile-only
-- stress case, and a steady-state hot loop. Each trace workload is also run with the
-- floor: a handler that only asks LuaJIT for what any hook needs to name a trace
-- (jit.util.tracemc, jit.util.funcinfo), so the hook's own share is what it costs over
-- the floor.
--
-- A trace workload runs in rounds of no hook, the hook and the floor, in rotating order
-- (so drift on a shared machine, and whatever running first or last does, hits all
-- alike); the steady state in rounds of hook off + hook on, alternating. A round's time
-- is CPU time (os.clock: the hook's syscalls count); reported are the medians of each
-- side, of the per-round ratio to the round's run with no hook, and of the per-round
-- share (hook - floor, a trace), each with a 95% confidence interval for the median
-- (distribution-free: order statistics of the rounds). The first round is a warm-up
-- and is dropped. Traces compiled per round are counted (the traces the hook announced,
-- and LuaJIT's own flushes: past 1000 traces it drops them all), so "trace-heavy" is a
-- measured fact.
local J = require "uevent.jit"
local clock = os.clock

local N = tonumber(os.getenv("BENCH_TRACES")) or 600
local ROUNDS = tonumber(os.getenv("BENCH_ROUNDS")) or 101

local function quantile(t, q)
  local s = {}
  for i = 1, #t do s[i] = t[i] end
  table.sort(s)
  local x = 1 + (#s - 1) * q
  local i = math.floor(x)
  return s[i] + (s[math.min(i + 1, #s)] - s[i]) * (x - i)
end
local function median(t) return quantile(t, 0.5) end

-- 95% confidence interval of the median of t: [x(j), x(n+1-j)] of the sorted rounds,
-- j the largest rank with P(Binomial(n, 1/2) < j) <= 2.5% (no assumption about the
-- shape of the noise; 101 rounds: ranks 41 and 61).
local function median_ci(t)
  local s, n = {}, #t
  for i = 1, n do s[i] = t[i] end
  table.sort(s)
  local j, cdf, p = 0, 0, 0.5 ^ n   -- p = P(X = k), cdf = P(X < k)
  for k = 0, n do
    if cdf + p > 0.025 then j = k; break end
    cdf = cdf + p
    p = p * (n - k) / (k + 1)
  end
  if j < 1 then return s[1], s[n] end
  return s[j], s[n + 1 - j]
end

-- Trace-heavy: N fresh chunks (bench/jit-workload.lua), so every round records and
-- compiles new traces and, with the hook, announces each. ITERS sets how long each trace
-- then runs: 300 is the worst case (time is nearly all compiling: tiny traces, barely
-- used); 20000 is a program whose many traces each do some work. after (the hook's
-- flush) runs inside the timed part: a round pays for writing what its traces put in
-- the hook's batches, however big the batches are (only closing the session is left
-- out: a program opens one).
local here = ((arg[0] or ""):match("^(.*)/") or ".")
local make_chunks = dofile(here .. "/jit-workload.lua").make
local chunks = {}
local function trace_heavy(iters)
  return function(after)
    jit.flush()
    make_chunks(N, iters, chunks)
    collectgarbage()
    local t = clock()
    for i = 1, N do chunks[i]() end
    if after then assert(after()) end
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

-- The floor (bench/jit-floor.lua): tracemc for each trace, funcinfo once per start.
local floor_handler = dofile(here .. "/jit-floor.lua")
local FLOOR = {
  start = function() jit.attach(floor_handler, "trace"); return true end,
  stop = function() jit.attach(floor_handler) end,
  counts = { loaded = 0, flushes = 0 },
}

-- Returns the medians of off and on times, of the per-round on/off ratios (paired: a
-- slow moment on the machine hits both halves of a round), of traces and flushes.
-- H is the hook (uevent.jit, or FLOOR).
local function compare(f, rounds, H)
  H = H or J
  local off, on, ratio, ntr, nfl = {}, {}, {}, {}, {}
  local function hooked()
    assert(H.start(fresh()))
    local c = H.counts
    local l0, f0 = c.loaded, c.flushes
    local t = f()
    local n, fl = c.loaded - l0, c.flushes - f0
    H.stop()
    return t, n, fl
  end
  for r = 0, rounds do
    -- off first in odd rounds, on first in even ones: neither side always runs second
    local t0, t1, n, fl
    if r % 2 == 1 then
      t0 = f()
      t1, n, fl = hooked()
    else
      t1, n, fl = hooked()
      t0 = f()
    end
    if r > 0 then
      off[#off + 1], on[#on + 1], ratio[#ratio + 1] = t0, t1, t1 / t0
      ntr[#ntr + 1], nfl[#nfl + 1] = n, fl
    end
  end
  local lo, hi = median_ci(ratio)
  return median(off), median(on), median(ratio), median(ntr), median(nfl), lo, hi
end

-- The trace workloads: each round runs no hook, the hook and the floor, in an order
-- that rotates (so none always runs first or last), so the hook's and the floor's rows
-- are ratios to the same round's run with no hook, and the hook's share a trace is paired
-- too: (hook - floor) / traces, a round at a time, its median with its own interval. (Up
-- to 2026-11-23 the floor had rounds of its own after the hook's, and the share's
-- interval paired the far ends of the two rows' intervals; a slow phase of the machine
-- that hit one row's rounds and not the other's moved the share by 0.3 us.)
local function compare3(f, rounds)
  local off, on, fon, ratio, fratio, share, ntr, nfl = {}, {}, {}, {}, {}, {}, {}, {}
  local function with(H)
    assert(H.start(fresh()))
    local c = H.counts
    local l0, f0 = c.loaded, c.flushes
    local t = f(H.flush)
    local n, fl = c.loaded - l0, c.flushes - f0
    H.stop()
    return t, n, fl
  end
  for r = 0, rounds do
    local t0, t1, tf, n, fl
    for i = 0, 2 do
      local which = (i + r) % 3
      if which == 0 then t0 = f()
      elseif which == 1 then t1, n, fl = with(J)
      else tf = with(FLOOR) end
    end
    if r > 0 then
      off[#off + 1], on[#on + 1], fon[#fon + 1] = t0, t1, tf
      ratio[#ratio + 1], fratio[#fratio + 1] = t1 / t0, tf / t0
      share[#share + 1] = (t1 - tf) / n * 1e6
      ntr[#ntr + 1], nfl[#nfl + 1] = n, fl
    end
  end
  local lo, hi = median_ci(ratio)
  local flo, fhi = median_ci(fratio)
  local slo, shi = median_ci(share)
  return { off = median(off), on = median(on), fon = median(fon), ratio = median(ratio),
           lo = lo, hi = hi, fratio = median(fratio), flo = flo, fhi = fhi,
           share = median(share), slo = slo, shi = shi, ntr = median(ntr), nfl = median(nfl) }
end

-- 20000 iterations: the trace-heavy workload the target is for (a new trace every
-- ~40 us, each doing some work). 300: the compile-only stress case, where time is
-- nearly all LuaJIT's compiler; there LuaJIT's own API (the floor row) costs more than
-- the target before the hook writes a byte.
local per_trace -- s a trace costs with the hook in the stress case (median ratio less 1, x off)
for _, iters in ipairs { 20000, 300 } do
  local m = compare3(trace_heavy(iters), ROUNDS)
  local off, ntr = m.off, m.ntr
  per_trace = (m.ratio - 1) * off / ntr
  print(("luajit %-11s %d chunks x %5d iter: %4d traces, %d flushes/round  off %7.2f ms  on %7.2f ms  overhead %+6.2f%% [%+.1f, %+.1f]  (%.2f us/trace)")
    :format(iters >= 20000 and "trace-heavy" or "stress", N, iters, ntr, m.nfl, off * 1e3,
            m.on * 1e3, (m.ratio - 1) * 100, (m.lo - 1) * 100, (m.hi - 1) * 100,
            (m.on - off) / ntr * 1e6))
  print(("  floor: tracemc+funcinfo only, %5d iter                         off %7.2f ms  on %7.2f ms  overhead %+6.2f%% [%+.1f, %+.1f]  (%.2f us/trace)")
    :format(iters, off * 1e3, m.fon * 1e3, (m.fratio - 1) * 100, (m.flo - 1) * 100,
            (m.fhi - 1) * 100, (m.fon - off) / ntr * 1e6))
  -- The share, paired; and, as it was reported before, the rows' overheads less each
  -- other as times with the far ends of their intervals (wider: it ignores the pairing).
  local function rows(r, fr) return ((r - 1) - (fr - 1)) * off / ntr * 1e6 end
  print(("  share: the hook less the floor, %5d iter                       %.2f us/trace [%.2f, %.2f] paired; rows %.2f [%.2f, %.2f]")
    :format(iters, m.share, m.slo, m.shi, rows(m.ratio, m.fratio), rows(m.lo, m.fhi),
            rows(m.hi, m.flo)))
end
local SROUNDS = tonumber(os.getenv("BENCH_STEADY_ROUNDS")) or 61
local off, on, ratio, ntr, _, lo, hi = compare(steady, SROUNDS)
print(("luajit steady state (%.0e iter): %d traces                    off %7.2f ms  on %7.2f ms  overhead %+6.2f%% [%+.1f, %+.1f]")
  :format(STEADY, ntr, off * 1e3, on * 1e3, (ratio - 1) * 100, (lo - 1) * 100, (hi - 1) * 100))
-- In the steady state the hook does nothing while the loop runs (it announced ntr
-- traces, before): what the row shows beyond that is the machine. Two ways to tell:
-- the same rounds with no hook on either side (the noise of this machine), and the
-- hook's work counted: its traces at the stress case's cost per trace.
local NULL = { start = function() return true end, stop = function() end,
               counts = { loaded = 0, flushes = 0 } }
local noff, non, nratio, _, _, nlo, nhi = compare(steady, SROUNDS, NULL)
print(("  null: no hook on either side (this machine's noise)           off %7.2f ms  on %7.2f ms  overhead %+6.2f%% [%+.1f, %+.1f]")
  :format(noff * 1e3, non * 1e3, (nratio - 1) * 100, (nlo - 1) * 100, (nhi - 1) * 100))
print(("  bound: %d trace(s) announced x %.2f us (stress case, per trace) = %.4f%% of the loop's %.0f ms")
  :format(ntr, per_trace * 1e6, ntr * per_trace / off * 100, off * 1e3))
print(("# %d rounds of off, hook and floor in rotating order (%d off/on for steady state), CPU time: medians; overhead = median of per-round on/off [its 95%% confidence interval]; targets: trace-heavy <= 10%%, steady < 1%%; the hook's own share = median of per-round (hook - floor) / traces [its 95%% confidence interval] (target <= 0.5 us a trace)")
  :format(ROUNDS, SROUNDS))
