-- _notes.lua - what the record model's bracket notes are in LuaJIT: [bytes x N] a Lua
-- string, [u64 x N] and [u64 x N of K] Lua arrays of uint64_t cdata, each read in place
-- from a record the library decoded, exactly the elements the note counts. The generated
-- uevent/_records.lua calls these: require "uevent._notes"(lib).
local ffi = require "ffi"
local bit = require "bit"
local ffi_string = ffi.string

return function(lib)
  local function bytes(p, n)
    n = tonumber(n)
    if p == nil or n == 0 then return "" end
    return ffi_string(p, n)
  end
  -- n entries of per u64s each: a flat array when per == 1, else an array of arrays.
  -- Read in place (what uevent_perf_u64() does), swapped when the record's order is not ours.
  local u64p = ffi.typeof("const uint64_t *")
  local bswap = bit.bswap
  local bo_host = tonumber(lib.UEVENT_BO_HOST)
  local host_bo = ffi.abi("le") and lib.UEVENT_BO_LITTLE or lib.UEVENT_BO_BIG
  local function u64s(p, n, per, bo)
    local t = {}
    n, per = tonumber(n), tonumber(per)
    if p == nil or n == 0 or per == 0 then return t end
    local a = ffi.cast(u64p, p)
    local swap = bo ~= bo_host and bo ~= host_bo
    for i = 0, n - 1 do
      local e = per == 1 and t or {}   -- one flat array, or one array per entry
      for j = 0, per - 1 do
        local v = a[i * per + j]
        e[per == 1 and i + 1 or j + 1] = swap and bswap(v) or v
      end
      if per ~= 1 then t[i + 1] = e end
    end
    return t
  end
  return { bytes = bytes, u64s = u64s }
end
