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
assert(uevent.open { transport = "file", path = os.getenv("UEVENT_BENCH_FILE") or "bench.uev", ignore_env = true })
print(("lua enabled uevent.mark %.2f"):format(measure(100000, function(n) for _ = 1, n do mark("x") end end)))
print(("lua enabled ffi-uevent_mark %.2f"):format(measure(100000, function(n) for _ = 1, n do lib.uevent_mark("x") end end)))
local fd = ffi.C.open("/dev/null", 1 + 1024) -- O_WRONLY|O_APPEND
print(("lua enabled ffi.C.write %.2f"):format(measure(100000, function(n) for _ = 1, n do ffi.C.write(fd, "x\n", 2) end end)))
