-- bindings.lua - LuaJIT's share of bench/bindings: ns per mark, disabled and enabled.
local ffi = require "ffi"
local uevent = require "uevent"
ffi.cdef [[
int open(const char *path, int flags, ...);
ssize_t write(int fd, const void *buf, size_t n);
struct uevent_bench_ts { long sec, nsec; };
int clock_gettime(int clk, struct uevent_bench_ts *ts);
]]
local ts = ffi.new("struct uevent_bench_ts")
local function now() ffi.C.clock_gettime(1, ts); return tonumber(ts.sec) * 1e9 + tonumber(ts.nsec) end
local function measure(n, fn)
  local best = 1e30
  for _ = 1, 5 do
    local t0 = now()
    fn(n)
    best = math.min(best, (now() - t0) / n)
  end
  return best
end
local mark, lib = uevent.mark, uevent.lib
uevent.open { transport = "none", ignore_env = true }
print(("lua disabled uevent.mark %.2f"):format(measure(20000000, function(n) for _ = 1, n do mark("x") end end)))
assert(uevent.open { transport = "file", path = os.getenv("UEVENT_BENCH_FILE") or "bench.perf.data", ignore_env = true })
print(("lua enabled uevent.mark %.2f"):format(measure(100000, function(n) for _ = 1, n do mark("x") end end)))
print(("lua enabled ffi-uevent_mark %.2f"):format(measure(100000, function(n) for _ = 1, n do lib.uevent_mark("x") end end)))
local fd = ffi.C.open("/dev/null", 1 + 1024) -- O_WRONLY|O_APPEND
print(("lua enabled ffi.C.write %.2f"):format(measure(100000, function(n) for _ = 1, n do ffi.C.write(fd, "x\n", 2) end end)))

-- Reading: ns per record turned into Lua tables (what a reader pays beyond the C decode).
local function slurp(p) local h = io.open(p, "rb"); if not h then return nil end local s = h:read("*a"); h:close(); return s end
local data = (os.getenv("top_srcdir") or ".") .. "/t/data/"
local golden = slurp(data .. "perf_records.le.bin")
if golden and ffi.abi("le") then
  local fmt = uevent.perf_format { sample_type = 0x3ffbfff, read_format = 31, sample_id_all = 1,
                                   branch_sample_type = bit.lshift(1, 17),
                                   sample_regs_user = 7, sample_regs_intr = 3 }
  local first = assert(uevent.decode_perf_record(golden, fmt))
  local last_off = #golden - 88 -- the UEVENT record closes the file
  local dec = uevent.decode_perf_record
  print(("lua read decode_perf_record-sample %.2f"):format(measure(100000, function(n)
    for _ = 1, n do dec(golden, fmt, nil, 0) end end)))
  print(("lua read decode_perf_record-uevent %.2f"):format(measure(100000, function(n)
    for _ = 1, n do dec(golden, fmt, nil, last_off) end end)))
  assert(first.sample and dec(golden, fmt, nil, last_off).uevent)
end
local pd = data .. "clock.perf.data"
if slurp(pd) then
  local count = 0
  for _ in assert(uevent.perf_data(pd)):records() do count = count + 1 end
  print(("lua read perf_data-record %.2f"):format(measure(50, function(n)
    for _ = 1, n do for _ in uevent.perf_data(pd):records() do end end
  end) / count))
end

-- A live session (root, uprobes): ns per record read from the rings into tables, the
-- marks' own cost (a uprobe hit each) left out.
pcall(ffi.cdef, "unsigned int getuid(void);")
if ffi.C.getuid() == 0 and uevent.open { transport = "usdt", ignore_env = true } then
  local s = uevent.session { pid = 0, transports = { "usdt" }, usdt_max_payload = 64 }
  if s then
    local best, n = 1e30, 2000
    for _ = 1, 5 do
      for i = 1, n do mark("bench") end
      local t0, got = now(), 0
      while got < n do
        local r = s:next(1000)
        if not r then break end
        got = got + 1
      end
      if got == n then best = math.min(best, (now() - t0) / n) end
    end
    s:close()
    if best < 1e30 then print(("lua read session-record %.2f"):format(best)) end
  end
end
uevent.open { transport = "none", ignore_env = true }
