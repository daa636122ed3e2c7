-- jit-workload.lua - the trace workload of the LuaJIT hook benchmarks (jit-luajit.lua,
-- jit-luajit-parts.lua, jit-luajit-ab.lua): n fresh chunks, each with its own loop, so
-- every round records and compiles new traces (a root trace per loop plus side traces
-- for its branch). iters sets how long each trace then runs: 300 is the compile-only
-- stress case, 20000 a program whose many traces each do some work.
-- Returns { make = make(n, iters[, into]) -> n fresh chunks, rotate = rotate(...) } (dofile
-- it: bench/ is not on LUA_PATH).
local SRC = [[
local t, s = {}, %d
for i = 1, %d do
  local k = i %% 16 + 1
  t[k] = (t[k] or 0) + i * %d
  if t[k] %% 3 == 0 then s = s + k else s = s - 1 end
end
return s]]
local function make(n, iters, into)
  local chunks = into or {}
  for i = 1, n do chunks[i] = assert(loadstring(SRC:format(i, iters, i), "=heavy.lua")) end
  return chunks
end

-- Runs rounds (plus a first, dropped) of the workload with each of parts ({ name,
-- start, stop }: either may be nil) in turn, the order rotating every round; returns
-- the CPU times by name (a list each) and the traces a round of o.counted made.
-- o.loaded() counts loads so far; o.flush(), if it returns a function, is called inside
-- the timed part (a hook's batches: the round's writes are its own); o.between() runs
-- after each round.
local function rotate(parts, rounds, n, iters, o)
  local times, ntr = {}, 0
  for _, p in ipairs(parts) do times[p[1]] = {} end
  for r = 0, rounds do
    for i = 1, #parts do
      local p = parts[(i + r) % #parts + 1]
      jit.flush()
      local chunks = make(n, iters)
      collectgarbage()
      if p[2] then p[2]() end
      local l0 = o.loaded()
      local flush = o.flush()
      local t = os.clock()
      for c = 1, n do chunks[c]() end
      if flush then flush() end
      t = os.clock() - t
      if p[1] == o.counted then ntr = o.loaded() - l0 end
      if p[3] then p[3]() end
      if r > 0 then table.insert(times[p[1]], t) end
    end
    if o.between then o.between() end
  end
  return times, ntr
end

return { make = make, rotate = rotate }
