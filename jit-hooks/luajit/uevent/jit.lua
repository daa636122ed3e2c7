-- jit.lua - module uevent.jit: names LuaJIT traces in perf (jitdump, perf map, uevents).
--
--   luajit -juevent app.lua               -- jit/uevent.lua: LuaJIT's own -j way
--   require("uevent.jit").start()         -- the same from a program
--   -- then: perf record -k mono ...; perf inject --jit
--
-- Attaches to LuaJIT's "trace" VM events (jit.attach). On "stop" the trace's machine code
-- (jit.util.tracemc's address and size) is announced as "TRACE_12 mix app.lua:34" (the
-- function and line where the trace starts), with that line as its debug info, through
-- uevent_jit__code_load_func: the event fires inside the compiler, before the
-- interpreter can enter the new trace. A "flush" unloads every trace announced. Works
-- with stock LuaJIT 2.1; no LUAJIT_USE_PERFTOOLS.
--
-- C declarations come from the LuaJIT binding (require "uevent", generated from
-- uevent.h); none are restated here.
local ffi = require "ffi"
local jit = require "jit"
local jutil = require "jit.util"

local tracemc, traceinfo, funcinfo = jutil.tracemc, jutil.traceinfo, jutil.funcinfo
local tostring, pairs, type, next, getinfo = tostring, pairs, type, next, debug.getinfo
local bor = require("bit").bor

local M = {}

-- ---- binding -----------------------------------------------------------------------

local lib, via
local function bind()
  if lib then return lib end
  local ok, uevent = pcall(require, "uevent")
  if ok and type(uevent) == "table" and uevent.lib
     and pcall(function() return uevent.lib.uevent_jit__code_load_func end) then
    lib, via = uevent.lib, "binding"
    return lib
  end
  return nil, "uevent.jit needs the LuaJIT binding (require \"uevent\": make install puts "
    .. "it beside uevent/jit.lua; in the build tree put bindings/lua on LUA_PATH): "
    .. tostring(uevent)
end

-- ---- state -------------------------------------------------------------------------

local session              -- struct uevent_jit *, or nil when stopped
local lines = true         -- send a DEBUG_INFO line for each trace
local startf, startpc = {}, {}  -- trace number -> function and bytecode pc at "start"
local loaded = {}          -- trace number -> mcode address (a Lua number)
local shortsrc = {}        -- chunk name -> the file part of funcinfo's loc
local names = {}           -- trace number -> "TRACE_n" (numbers are reused after a flush)
-- function -> { file = "app.lua", fn = "mix" or false, [pc] = line }: funcinfo's
-- answer for a trace start, kept for the next trace that starts there (after a flush,
-- an abort, a side exit that gets hot again: real programs compile the same spots
-- again and again), and the function's name. Weak keys: a function's entries go with it.
local lineat = setmetatable({}, { __mode = "k" })
local counts = { loaded = 0, unloaded = 0, errors = 0, flushes = 0 }
M.counts = counts

local code_load, code_load_func, code_unload, code_unload_all  -- looked up once

local function unload(tr)
  local addr = loaded[tr]
  if addr then
    loaded[tr] = nil
    if code_unload(session, addr, 0) == 0 then
      counts.unloaded = counts.unloaded + 1
    end
  end
end

-- The name the function a trace starts in is called by ("mix"), or false: asked of the
-- stack (debug.getinfo "n": the caller's call instruction says it) once per function,
-- and only for a function with a definition line (a main chunk has no name). At "stop"
-- the frame that called the hook is the function being recorded, unless the trace
-- left it (a function that returned): then false, and no name.
local function func_name(func, fi)
  if not fi.linedefined or fi.linedefined <= 0 then return false end
  local d = getinfo(4, "nf")   -- 1 here, 2 announce, 3 on_trace, 4 the function
  return d and d.func == func and d.name or false
end

-- Announces trace tr; func/pc are where it started (nil for traces found at start()).
-- This runs inside the trace compiler, before the trace is first entered, for every
-- trace compiled: it is kept to one jit.util.tracemc (for the address and size: C
-- reads the bytes from the address), at most one funcinfo (none when a trace started
-- at this function and pc before) and one C call, with the name and line record built
-- in C (uevent_jit__code_load_func) from strings cached here ("TRACE_n" per trace
-- number, the file per chunk, the function's name per function): no Lua string is
-- built for a trace.
local function announce(tr, func, pc)
  local mcode, addr = tracemc(tr)
  if not mcode or not addr then return end
  local size = #mcode
  if size == 0 then return end
  if loaded[tr] then unload(tr) end      -- the number was reused
  local name = names[tr]
  if not name then
    name = "TRACE_" .. tr
    names[tr] = name
  end
  local ret
  local at = func and lines and lineat[func]
  local line = at and at[pc]
  if line then
    ret = code_load_func(session, name, at.fn or nil, addr, size, nil, at.file, line)
  elseif func then
    -- funcinfo only here, at a trace start not seen before: it allocates, and "start"
    -- fires for every attempt, aborted ones included.
    local fi = funcinfo(func, pc)
    local loc
    loc, line = fi.loc, fi.currentline
    if loc then
      if not at then
        at = lineat[func]
        if not at then
          at = { fn = func_name(func, fi) }
          lineat[func] = at
        end
      end
      if lines and line and line > 0 then
        local file = at.file
        if not file then
          local src = fi.source
          file = shortsrc[src]
          if not file then
            file = loc:sub(1, -(#tostring(line) + 2))
            shortsrc[src] = file          -- interned here: outlives the call
          end
          at.file = file
        end
        at[pc] = line
        ret = code_load_func(session, name, at.fn or nil, addr, size, nil, file, line)
      else     -- no line record: the name says where
        name = name .. " " .. (at.fn and at.fn .. " " or "") .. loc
      end
    elseif fi.ffid then
      name = name .. " [builtin#" .. fi.ffid .. "]"
    end
  end
  if not ret then ret = code_load(session, name, addr, size, nil) end
  if ret == 0 then
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
    counts.flushes = counts.flushes + 1
    -- every trace is gone: one C call, not one per trace (a flush can drop thousands)
    if next(loaded) and code_unload_all(session) == 0 then
      for t in pairs(loaded) do counts.unloaded = counts.unloaded + 1 end
    end
    loaded = {}
  end
end

-- ---- API ---------------------------------------------------------------------------

-- start{dir=, perf_map=false, jitdump=false, uevent=false, perf_map_path=, lines=false,
--       perf_map_buffered=false, jitdump_buffered=false}
-- (lines=false: no DEBUG_INFO record; the name still says file:line.
--  perf_map_buffered=false, jitdump_buffered=false: each perf-map line written, each
--  jitdump record stored in the file, before the trace runs, as the C API does by
--  default. The hook batches both (UEVENT_JIT_BUFFER_PERF_MAP, _JITDUMP: written at
--  64 KiB, 100 ms, fork, stop and exit) since perf reads them after the run, and
--  storing each record in the file costs more than all the rest of the hook on ext4;
--  the uevent marker, which orders the load in the perf stream, is never batched. A
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
  local o = ffi.new("struct uevent_jit_opts")
  o.sz = ffi.sizeof(o)
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
  lines = opts.lines ~= false
  session = ffi.gc(s, lib.uevent_jit__close)
  code_load, code_load_func = lib.uevent_jit__code_load, lib.uevent_jit__code_load_func
  code_unload, code_unload_all = lib.uevent_jit__code_unload, lib.uevent_jit__code_unload_all
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
