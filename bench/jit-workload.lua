-- jit-workload.lua - the trace workload of the LuaJIT hook benchmarks (jit-luajit.lua,
-- jit-luajit-parts.lua, jit-luajit-ab.lua): n fresh chunks, each with its own loop, so
-- every round records and compiles new traces (a root trace per loop plus side traces
-- for its branch). iters sets how long each trace then runs: 300 is the compile-only
-- stress case, 20000 a program whose many traces each do some work.
-- Returns make(n, iters) -> a table of n chunks, fresh each call (dofile it: bench/ is
-- not on LUA_PATH).
local SRC = [[
local t, s = {}, %d
for i = 1, %d do
  local k = i %% 16 + 1
  t[k] = (t[k] or 0) + i * %d
  if t[k] %% 3 == 0 then s = s + k else s = s - 1 end
end
return s]]
return function(n, iters, into)
  local chunks = into or {}
  for i = 1, n do chunks[i] = assert(loadstring(SRC:format(i, iters, i), "=heavy.lua")) end
  return chunks
end
