-- jit/uevent.lua - `luajit -juevent[=opts] app.lua`: starts uevent.jit the way LuaJIT's own
-- -j modules (jit/v.lua, jit/p.lua) start: luajit calls start() with the text after
-- "=" split at commas, and fails the -j option, naming the reason, if start() raises.
--
--   luajit -juevent app.lua                       -- jitdump + perf map + uevents
--   luajit -juevent=dir=/tmp/jd,nomap app.lua      -- options, comma-separated:
--     dir=DIR        the jitdump directory (default $JITDUMPDIR/.debug/jit/...)
--     map=PATH       the perf map file (default /tmp/perf-PID.map)
--     nomap          no perf map          nojitdump   no jitdump file
--     nouevent       no uevent markers    nolines     no DEBUG_INFO line records
--     unbuffered     each jitdump record and perf-map line in the file before its trace
--                    runs (default: batched, written at 64 KiB, 100 ms and exit)
local J = require "uevent.jit"

local M = {}

local flags = {
  nomap = { "perf_map" }, nojitdump = { "jitdump" }, nouevent = { "uevent" },
  nolines = { "lines" }, unbuffered = { "perf_map_buffered", "jitdump_buffered" },
}
local values = { dir = "dir", map = "perf_map_path" }

local function unknown(a)
  error(("uevent.jit: unknown option '%s' (options: dir=DIR, map=PATH, nomap, "
    .. "nojitdump, nouevent, nolines, unbuffered)"):format(a), 0)
end

-- "dir=/x", "nomap", ... -> the options table of uevent.jit.start; raises on a bad one.
function M.parse(...)
  local opts = {}
  for i = 1, select("#", ...) do
    local a = select(i, ...)
    if a ~= nil and a ~= "" then
      local k, v = a:match("^([%w_]+)=(.*)$")
      if k then
        if not values[k] then unknown(a) end
        if v == "" then error(("uevent.jit: option '%s' needs a value"):format(k), 0) end
        opts[values[k]] = v
      elseif flags[a] then
        for _, o in ipairs(flags[a]) do opts[o] = false end
      else
        unknown(a)
      end
    end
  end
  return opts
end

-- Called by luajit for -juevent[=a,b,...]; raises (failing the option) when it cannot start.
function M.start(...)
  local opts = M.parse(...)
  local ok, err = pcall(J.start, opts)
  if not ok then error(err, 0) end
  return true
end

M.stop = J.stop

return M
