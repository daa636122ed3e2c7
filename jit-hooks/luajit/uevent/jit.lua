-- jit.lua - module uevent.jit: names LuaJIT traces in perf (jitdump, perf map, uevents).
--
--   require("uevent.jit").start()     -- then: perf record -k mono ...; perf inject --jit
--
-- Attaches to LuaJIT's "trace" VM events (jit.attach). On "stop" the trace's machine code
-- (jit.util.tracemc) is announced as "TRACE_12 app.lua:34" (where the trace starts),
-- with that line as its debug info, through uevent_jit__code_load: the event fires
-- inside the compiler, before the interpreter can enter the new trace. A "flush"
-- unloads every trace announced. Works with stock LuaJIT 2.1; no LUAJIT_USE_PERFTOOLS.
--
-- C declarations come from the LuaJIT binding (require "uevent", generated from
-- uevent.h); none are restated here.
local ffi = require "ffi"
local jit = require "jit"
local jutil = require "jit.util"

local tracemc, traceinfo, funcinfo = jutil.tracemc, jutil.traceinfo, jutil.funcinfo
local tostring, pairs, type = tostring, pairs, type

local M = {}

-- ---- binding -----------------------------------------------------------------------

local lib, via
local function bind()
  if lib then return lib end
  local ok, uevent = pcall(require, "uevent")
  if ok and type(uevent) == "table" and uevent.lib
     and pcall(function() return uevent.lib.uevent_jit__open end) then
    lib, via = uevent.lib, "binding"
    return lib
  end
  return nil, "uevent.jit needs the LuaJIT binding (require \"uevent\": put bindings/lua on "
    .. "LUA_PATH): " .. tostring(uevent)
end

-- ---- state -------------------------------------------------------------------------

local session              -- struct uevent_jit *, or nil when stopped
local lines = true         -- send a DEBUG_INFO line for each trace
local startf, startpc = {}, {}  -- trace number -> function and bytecode pc at "start"
local loaded = {}          -- trace number -> mcode address (a Lua number)
local shortsrc = {}        -- chunk name -> the file part of funcinfo's loc
local entry                -- reused struct uevent_jit_debug_entry[1]
local counts = { loaded = 0, unloaded = 0, errors = 0 }
M.counts = counts

local function unload(tr)
  local addr = loaded[tr]
  if addr then
    loaded[tr] = nil
    if lib.uevent_jit__code_unload(session, addr, 0) == 0 then
      counts.unloaded = counts.unloaded + 1
    end
  end
end

-- Announces trace tr; func/pc are where it started (nil for traces found at start()).
local function announce(tr, func, pc)
  local mcode, addr = tracemc(tr)
  if not mcode or not addr or #mcode == 0 then return end
  if loaded[tr] then unload(tr) end      -- the number was reused
  local name = "TRACE_" .. tr
  if func then
    -- funcinfo only here, once per compiled trace: it allocates, and "start" fires for
    -- every attempt, aborted ones included.
    local fi = funcinfo(func, pc)
    local loc, line = fi.loc, fi.currentline
    if loc then
      name = name .. " " .. loc
      if lines and line and line > 0 then
        local src = fi.source
        local file = shortsrc[src]
        if not file then
          file = loc:sub(1, -(#tostring(line) + 2))
          shortsrc[src] = file
        end
        entry[0].addr = addr
        entry[0].line = line
        entry[0].file = file            -- interned in shortsrc: outlives the call
        lib.uevent_jit__debug_info(session, addr, entry, 1)
      end
    elseif fi.ffid then
      name = name .. " [builtin#" .. fi.ffid .. "]"
    end
  end
  if lib.uevent_jit__code_load(session, name, addr, #mcode, mcode) == 0 then
    loaded[tr] = addr
    counts.loaded = counts.loaded + 1
  else
    counts.errors = counts.errors + 1
  end
end

local function on_trace(what, tr, func, pc)
  if what == "start" then
    startf[tr], startpc[tr] = func, pc
  elseif what == "stop" then
    announce(tr, startf[tr], startpc[tr])
    startf[tr] = nil
  elseif what == "flush" then
    for t in pairs(loaded) do unload(t) end
  end
end

-- ---- API ---------------------------------------------------------------------------

-- start{dir=, perf_map=false, jitdump=false, uevent=false, perf_map_path=, lines=false}
-- (lines=false: no DEBUG_INFO record; the name still says file:line)
-- Returns true, or nil, message.
function M.start(opts)
  if session then return true end
  opts = opts or {}
  local l, err = bind()
  if not l then return nil, err end
  local o = ffi.new("struct uevent_jit_opts")
  o.sz = ffi.sizeof(o)
  o.dir = opts.dir
  o.perf_map_path = opts.perf_map_path
  local flags = 0
  if opts.jitdump == false then flags = flags + 1 end     -- UEVENT_JIT_NO_JITDUMP
  if opts.perf_map == false then flags = flags + 2 end    -- UEVENT_JIT_NO_PERF_MAP
  if opts.uevent == false then flags = flags + 4 end      -- UEVENT_JIT_NO_UEVENT
  o.flags = flags
  lines = opts.lines ~= false
  local s = lib.uevent_jit__open(o)
  if s == nil then
    return nil, "uevent.jit: " .. ffi.string(lib.uevent_strerror(-ffi.errno()))
  end
  session = ffi.gc(s, lib.uevent_jit__close)
  entry = ffi.new("struct uevent_jit_debug_entry[1]")
  -- Traces compiled before start(): announce them now, without a location.
  local misses, tr = 0, 1
  while misses < 64 do
    if traceinfo(tr) then announce(tr); misses = 0 else misses = misses + 1 end
    tr = tr + 1
  end
  jit.attach(on_trace, "trace")
  return true
end

-- Detaches and closes the session (its files stay for perf inject).
function M.stop()
  if not session then return true end
  jit.attach(on_trace)
  local s = session
  session = nil
  ffi.gc(s, nil)
  local ret = lib.uevent_jit__close(s)
  startf, startpc, loaded = {}, {}, {}
  if ret < 0 then return nil, ffi.string(lib.uevent_strerror(ret)) end
  return true
end

function M.running() return session ~= nil end

-- Paths of the files of the running session (nil when off or stopped).
function M.dump_path()
  if not session then return nil end
  local p = lib.uevent_jit__dump_path(session)
  return p ~= nil and ffi.string(p) or nil
end

function M.perf_map_path()
  if not session then return nil end
  local p = lib.uevent_jit__perf_map_path(session)
  return p ~= nil and ffi.string(p) or nil
end

-- "binding": where the C declarations came from (kept for callers of 0.1).
function M.via() bind(); return via end

return M
