-- jit-floor.lua - the floor of the LuaJIT hook benchmarks (jit-luajit.lua and
-- jit-luajit-parts.lua): what LuaJIT charges any hook that names a trace by its code
-- and source line through the public API, before the hook does anything with them: a
-- jit.attach handler that only calls jit.util.tracemc for each trace and
-- jit.util.funcinfo once per trace start (function, pc), as uevent.jit does.
-- Returns the handler (dofile it: bench/ is not on LUA_PATH).
local jutil = require "jit.util"
local tracemc, funcinfo = jutil.tracemc, jutil.funcinfo
local fstart, fpc = {}, {}
local fline = setmetatable({}, { __mode = "k" })
return function(what, tr, func, pc)
  if what == "start" then
    fstart[tr], fpc[tr] = func, pc
  elseif what == "stop" then
    local mcode = tracemc(tr)
    local f = fstart[tr]
    if mcode and f then
      local at = fline[f]
      if not (at and at[fpc[tr]]) then
        if not at then at = {}; fline[f] = at end
        at[fpc[tr]] = funcinfo(f, fpc[tr]).currentline or 0
      end
    end
    fstart[tr] = nil
  end
end
