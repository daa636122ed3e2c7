-- jit_drop.lua - test_jit.lua's child (a use after free crashed or hung the process):
-- starts uevent.jit, drops the module and collects, runs a hot loop, then replaces the
-- hook's handler and collects again. Prints "line N" (the loop's) and "closed yes" when
-- the jitdump then holds its JIT_CODE_CLOSE record, before exit.
-- usage: luajit jit_drop.lua TMPDIR
local ffi = require "ffi"
local tmp = assert(arg[1], "usage: jit_drop.lua TMPDIR")

local J = require "uevent.jit"
J.start { dir = tmp .. "/jd4", perf_map_path = tmp .. "/drop.map", perf_map_buffered = false }
local dump = J.dump_path()
J = nil
package.loaded["uevent.jit"] = nil
collectgarbage(); collectgarbage(); collectgarbage()
local function loop4(k) local s = 0; for i = 1, k do s = s + i % 11 end; return s end
for _ = 1, 3 do loop4(10000) end
print("line " .. debug.getinfo(loop4, "S").linedefined)
io.stdout:flush()

-- Another handler replaces the hook's: nothing holds the session, whose finalizer closes it.
local function other() end
jit.attach(other, "trace"); jit.attach(other)
collectgarbage(); collectgarbage()
local f = assert(io.open(dump, "rb")); local s = f:read("*a"); f:close()
local p, off, closed = ffi.cast("const uint8_t *", s), 40, false
while off + 16 <= #s do
  local id, size = ffi.cast("const uint32_t *", p + off)[0], ffi.cast("const uint32_t *", p + off)[1]
  if size < 16 then break end
  if id == 3 then closed = true end      -- JIT_CODE_CLOSE
  off = off + size
end
print("closed " .. (closed and "yes" or "no"))
