-- hot.lua - a LuaJIT program with one hot loop, run under perf by t/jit-luajit.test.
-- usage: luajit hot.lua SECONDS [nohook]
local secs = tonumber(arg[1]) or 0.5
if arg[2] ~= "nohook" then
  local J = require "uevent.jit"
  assert(J.start())
  io.write("dump ", J.dump_path() or "-", "\nmap ", J.perf_map_path() or "-", "\n")
end

local function hot(n)
  local s = 0
  for i = 1, n do s = s + (i * 7) % 13 end   -- the hot loop: TRACE_n hot hot.lua:12
  return s
end

local t0, s = os.clock(), 0
while os.clock() - t0 < secs do s = s + hot(1000000) end
io.write("sum ", s, "\n")
