-- symbolize.lua - names for (pid, address, time) from a recording: uevent_symbolizer.
--
--   local symbolize = require "uevent.symbolize"
--   local s = assert(symbolize.new{ debug_dir = "build/debug" })
--   assert(s:feed_file("run.data"))      -- or s:feed_last() after each pf:next()
--   local sym = s:lookup(pid, addr, time)   -- { name=, dso=, offset=, file=, line=, source= }
--
-- JIT code announced in the stream is named as it was at the time asked. Errors are
-- nil, message, -errno; an address nothing names gives a table whose name is nil.
local ffi = require "ffi"
local bit = require "bit"
local uevent = require "uevent"
local lib, fail = uevent.lib, uevent._fail

local M = {}
local SOURCES = { [0] = "none", "elf", "kernel", "jit_uevent", "jitdump", "perf_map" }
M.sources = SOURCES
local ENOENT, EINVAL = -2, -22
local U64_MAX = ffi.cast("uint64_t", -1)

local function cstr(p) return p ~= nil and ffi.string(p) or nil end

local Symbolizer = {}
Symbolizer.__index = Symbolizer

-- opts: debug_dir, kallsyms, perf_map_dir, root (strings), lines (default true),
-- demangle (default true: C++ and Rust names as perf prints them; false: raw).
function M.new(opts)
  opts = opts or {}
  local o = uevent._out_struct("struct uevent_symbolizer_opts")
  o.flags = bit.bor(opts.lines == false and lib.UEVENT_SYMBOLIZER_NO_LINES or 0,
                    opts.demangle == false and lib.UEVENT_SYMBOLIZER_NO_DEMANGLE or 0)
  for _, k in ipairs { "debug_dir", "kallsyms", "perf_map_dir", "root" } do
    if opts[k] ~= nil then
      if type(opts[k]) ~= "string" then return fail(EINVAL, "symbolizer: " .. k .. " must be a string") end
      o[k] = opts[k]   -- the library copies it during the call
    end
  end
  local p = lib.uevent_symbolizer__new(o)
  if p == nil then return fail(-ffi.errno(), "symbolizer") end
  return setmetatable({ _s = ffi.gc(p, lib.uevent_symbolizer__free),
                        _out = uevent._out_struct("struct uevent_symbol") }, Symbolizer)
end

function Symbolizer:_live()
  if not self._s then error("symbolizer: used after close()", 3) end
  return self._s
end

-- Feeds the record the last session or perf_data :next() returned (a reading loop, in
-- time order); true if it was side-band, or nil, err, -errno (-EINVAL: no record, or its
-- reader is closed: the record pointed into what closing it freed).
function Symbolizer:feed_last()
  local rec = uevent._last_perf_record()
  if not rec then return fail(EINVAL, "feed_last: no record of an open reader") end
  local used = lib.uevent_symbolizer__feed(self:_live(), rec)
  if used < 0 then return fail(used, "feed") end
  return used > 0
end

-- Feeds every record of a perf.data; returns the number used (side-band), or nil, err.
-- C reads and feeds each record (uevent_symbolizer__feed_file): no Lua runs per record.
function Symbolizer:feed_file(path)
  local s = self:_live()
  if type(path) ~= "string" then return fail(EINVAL, "feed_file: path must be a string") end
  local n = lib.uevent_symbolizer__feed_file(s, path)
  if n < 0 then return fail(tonumber(n), uevent.reason()) end
  return tonumber(n)
end

-- Names addr in process pid at time (default: the latest).
function Symbolizer:lookup(pid, addr, time)
  local s, o = self:_live(), self._out
  local ret = lib.uevent_symbolizer__lookup(s, pid, addr, time or U64_MAX, o)
  if ret < 0 and ret ~= ENOENT then return fail(ret, "lookup") end
  return {
    name = ret == 0 and cstr(o.name) or nil, dso = cstr(o.dso), offset = tonumber(o.offset),
    sym_addr = o.sym_addr, sym_size = tonumber(o.sym_size), file = cstr(o.file),
    line = tonumber(o.line), source = SOURCES[tonumber(o.source)] or tonumber(o.source),
  }
end

-- The thread's command name at time, or nil.
function Symbolizer:comm(tid, time)
  return cstr(lib.uevent_symbolizer__comm(self:_live(), tid, time or U64_MAX))
end

function Symbolizer:close()
  if self._s then
    lib.uevent_symbolizer__free(ffi.gc(self._s, nil))
    self._s = nil
  end
end

return M
