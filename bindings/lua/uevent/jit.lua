-- jit.lua - module uevent.jit: names LuaJIT traces in perf (jitdump, perf map, uevents).
--
--   luajit -juevent app.lua               -- jit/uevent.lua: LuaJIT's own -j way
--   require("uevent.jit").start()         -- the same from a program
--   -- then: perf record -k mono ...; perf inject --jit
--
-- Attaches to LuaJIT's "trace" VM events (jit.attach) a handler written in C
-- (uevent/jit_core.c: no interpreted Lua and no FFI call per trace). On "stop" the
-- trace's machine code (jit.util.tracemc's address and size) is announced as "TRACE_12
-- mix app.lua:34" (the function and line where the trace starts), with that line as its
-- debug info, through uevent_jit__code_load_func: the event fires inside the compiler,
-- before the interpreter can enter the new trace. A "flush" unloads every trace
-- announced. Works with stock LuaJIT 2.1; no LUAJIT_USE_PERFTOOLS.
--
-- The running hook holds its session: core.bind gives the hook the session's cdata, and
-- the attached handler holds the hook, so a program that drops this module
-- (package.loaded["uevent.jit"] = nil) and collects garbage keeps its traces announced;
-- the session's finalizer closes it once the handler is gone (another jit.attach to
-- "trace", or the exit).
--
-- C declarations come from the LuaJIT binding (require "uevent", generated from
-- uevent.h); none are restated here.
local ffi = require "ffi"
local jit = require "jit"
local jutil = require "jit.util"

local tracemc, traceinfo, funcinfo = jutil.tracemc, jutil.traceinfo, jutil.funcinfo
local tostring, type = tostring, type
local bor = require("bit").bor

local M = {}

-- ---- binding -----------------------------------------------------------------------

-- The trace handler is C (uevent/jit_core.c, a lua_CFunction): per trace it runs no
-- interpreted Lua and makes no FFI call. It keeps the counts, from the first start().
local lib, via, core, hook, handler, out_struct
local function bind()
  if lib then return lib end
  local okc, c = pcall(require, "uevent.jit_core")
  if not okc then
    return nil, "uevent.jit needs its C part uevent/jit_core.so (make install puts it in "
      .. "LuaJIT's C module directory; in the build tree put bindings/lua on "
      .. "LUA_CPATH): " .. tostring(c)
  end
  core = c
  local ok, uevent = pcall(require, "uevent")
  if not ok and tostring(uevent):match("module 'uevent' not found") then
    return nil, "uevent.jit needs the LuaJIT binding (require \"uevent\": make install puts "
      .. "it beside uevent/jit.lua; in the build tree put bindings/lua on LUA_PATH): "
      .. tostring(uevent)
  elseif not ok or type(uevent) ~= "table" or not uevent.lib then  -- found, no library
    return nil, "uevent.jit: cannot load libuevent (LD_LIBRARY_PATH, or UEVENT_LIB=path of "
      .. "libuevent.so): " .. tostring(uevent)
  elseif not pcall(function() return uevent.lib.uevent_jit__code_load_func end) then
    return nil, "uevent.jit: the libuevent loaded has no JIT API (an older one?): "
      .. tostring(os.getenv("UEVENT_LIB") or "on the loader's path")
  end
  lib, via, out_struct = uevent.lib, "binding", uevent._out_struct
  return lib
end

-- ---- state -------------------------------------------------------------------------

local session              -- struct uevent_jit *, or nil when stopped
local nth = { loaded = 1, unloaded = 2, errors = 3, flushes = 4 }
M.counts = setmetatable({}, { __index = function(_, k)   -- counts.loaded, ...: C's
  if nth[k] then return hook and (select(nth[k], core.counts(hook))) or 0 end
end })

local function addr(p) return tonumber(ffi.cast("uintptr_t", p)) end

-- ---- API ---------------------------------------------------------------------------

-- start{dir=, perf_map=false, jitdump=false, uevent=false, perf_map_path=, lines=false,
--       perf_map_buffered=false, jitdump_buffered=false}
-- (lines=false: no DEBUG_INFO record; the name still says file:line.
--  perf_map_buffered=false, jitdump_buffered=false: each perf-map line written, each
--  jitdump record stored in the file, before the trace runs, as the C API does by
--  default. The hook batches both (UEVENT_JIT_BUFFER_PERF_MAP, _JITDUMP: the dump
--  written in 256 KiB blocks, at 100 ms, fork, flush(), stop and exit, the perf-map
--  lines made from its records then) since perf reads them after the run, and storing
--  each record in the file costs more than all the rest of the hook on ext4; the
--  uevent marker, which orders the load in the perf stream, is never batched. A
--  process killed by a signal loses the batch.)
-- Returns true; raises with the reason when the hook cannot start (a hook that is not
-- running is not something to carry on without noticing: `luajit -juevent` then fails).
function M.start(opts)
  if session then return true end
  if opts ~= nil and type(opts) ~= "table" then
    error("uevent.jit: start(opts): opts must be a table, not " .. type(opts), 2)
  end
  opts = opts or {}
  local l, err = bind()
  if not l then error(err, 2) end
  local o = out_struct("struct uevent_jit_opts")
  o.dir = opts.dir
  o.perf_map_path = opts.perf_map_path
  local flags = 0
  if opts.jitdump == false then flags = bor(flags, l.UEVENT_JIT_NO_JITDUMP) end
  if opts.perf_map == false then flags = bor(flags, l.UEVENT_JIT_NO_PERF_MAP) end
  if opts.uevent == false then flags = bor(flags, l.UEVENT_JIT_NO_UEVENT) end
  if opts.perf_map_buffered ~= false then flags = bor(flags, l.UEVENT_JIT_BUFFER_PERF_MAP) end
  if opts.jitdump_buffered ~= false then flags = bor(flags, l.UEVENT_JIT_BUFFER_JITDUMP) end
  o.flags = flags
  local s = lib.uevent_jit__open(o)
  if s == nil then
    local e = -ffi.errno()
    local why = ffi.string(lib.uevent_reason())
    if why == "" then why = ffi.string(lib.uevent_strerror(e)) end
    error("uevent.jit: cannot start: " .. why, 2)
  end
  session = ffi.gc(s, lib.uevent_jit__close)
  if not hook then hook, handler = core.new(tracemc, funcinfo) end
  core.bind(hook, addr(s), addr(lib.uevent_jit__code_load), addr(lib.uevent_jit__code_load_func),
            addr(lib.uevent_jit__code_unload), addr(lib.uevent_jit__code_unload_all),
            opts.lines ~= false, session)
  -- Traces compiled before start(): announce them now, without a location.
  local misses, tr = 0, 1
  while misses < 64 do
    if traceinfo(tr) then handler("stop", tr); misses = 0 else misses = misses + 1 end
    tr = tr + 1
  end
  jit.attach(handler, "trace")
  return true
end

-- Detaches and closes the session (its files stay for perf inject).
function M.stop()
  if not session then return true end
  jit.attach(handler)
  core.bind(hook)
  local s = session
  session = nil
  ffi.gc(s, nil)
  local ret = lib.uevent_jit__close(s)
  if ret < 0 then return nil, ffi.string(lib.uevent_strerror(ret)) end
  return true
end

-- Writes the batched jitdump records and perf-map lines now (true; nil, err).
function M.flush()
  if not session then return nil, "uevent.jit: not running" end
  local ret = lib.uevent_jit__flush(session)
  if ret < 0 then return nil, ffi.string(lib.uevent_strerror(ret)) end
  return true
end

function M.running() return session ~= nil end

-- Paths of the files of the running session (nil when off or stopped).
local function path_of(getter)
  return function()
    local p = session and lib[getter](session)
    return p ~= nil and ffi.string(p) or nil
  end
end
M.dump_path = path_of("uevent_jit__dump_path")
M.perf_map_path = path_of("uevent_jit__perf_map_path")

-- "binding": where the C declarations came from (kept for callers of 0.1).
function M.via() bind(); return via end

return M
