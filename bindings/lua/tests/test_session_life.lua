-- test_session_life.lua - a session shut down or closed by another thread while next()
-- waits (a C thread of the host program: here a POSIX timer's SIGEV_THREAD, which
-- calls the C function with the session's pointer), and no use after close.
local ffi = require "ffi"
local uevent = require "uevent"
local tap = require "tests.tap"
local ok, skip = tap.ok, tap.skip

local ROUNDS, ECANCELED, EBADF = 20, -125, -9

pcall(ffi.cdef, [[
int getpid(void);
unsigned int getuid(void);
int access(const char *path, int mode);
int poll(void *fds, unsigned long n, int timeout);
]])
ffi.cdef [[
union lc_sigval { int i; void *p; };
struct lc_sigevent { union lc_sigval value; int signo, notify;
                     void (*fn)(union lc_sigval); void *attr; char pad[32]; };
struct lc_itimerspec { long isec, insec, vsec, vnsec; };
int timer_create(int clockid, struct lc_sigevent *sev, void **timer);
int timer_settime(void *timer, int flags, const struct lc_itimerspec *v, void *old);
int timer_delete(void *timer);
]]
local C, lib = ffi.C, uevent.lib
local SIGEV_THREAD, CLOCK_MONOTONIC = 2, 1
assert(ffi.sizeof("struct lc_sigevent") == 64)

local function events_left()
  local n, f = 0, io.open("/sys/kernel/tracing/uprobe_events")
  if not f then return -1 end
  local pre = "p:libuevent_" .. C.getpid() .. "_"
  for line in f:lines() do
    if line:sub(1, #pre) == pre then n = n + 1 end
  end
  f:close()
  return n
end

local function mono()
  local f = io.open("/proc/uptime"); local t = f:read("*n"); f:close(); return t
end

-- A thread that calls fn(s.h) after ms milliseconds.
local function later(fn, h, ms)
  local sev = ffi.new("struct lc_sigevent")
  sev.notify = SIGEV_THREAD
  sev.fn = ffi.cast("void (*)(union lc_sigval)", ffi.cast("void *", fn))
  sev.value.p = h
  local t = ffi.new("void *[1]")
  assert(C.timer_create(CLOCK_MONOTONIC, sev, t) == 0, "timer_create")
  local v = ffi.new("struct lc_itimerspec", 0, 0, 0, ms * 1000000)
  assert(C.timer_settime(t[0], 0, v, nil) == 0, "timer_settime")
  return t[0]
end

local why
if C.getuid() ~= 0 then why = "needs root to add uprobe events"
elseif C.access("/sys/bus/event_source/devices/uprobe", 0) ~= 0 then why = "kernel without uprobes"
else
  local s, err = uevent.session { transports = { "usdt" } }
  if not s then why = "no usdt session here: " .. tostring(err) else s:close() end
end
tap.plan(3)
if why then skip(3, why); tap.done() end

-- one session open throughout: the others share its uprobe events, so their open and
-- close skip making and removing them
local anchor = assert(uevent.session { transports = { "usdt" } })
for _, how in ipairs { "shutdown", "close" } do
  local cancelled, after, worst = 0, 0, 0
  for i = 1, ROUNDS do
    local s = assert(uevent.session { transports = { "usdt" } })
    local t = later(how == "shutdown" and lib.uevent_session__shutdown or lib.uevent_session__close,
                    s.h, 10 + i % 5 * 5)
    local t0 = mono()
    local rec, err, code = s:next(-1)
    worst = math.max(worst, mono() - t0)
    if rec == nil and code == ECANCELED then cancelled = cancelled + 1 end
    if how == "close" then
      -- freed by the other thread once this one left next(): forget it here
      s.h = nil
    else
      local r2, _, c2 = s:next(-1)
      s:close()
      local r3, _, c3 = s:next(0)
      if r2 == nil and c2 == ECANCELED and r3 == nil and c3 == EBADF then after = after + 1 end
    end
    C.timer_delete(t)
  end
  ok(cancelled == ROUNDS and (how == "close" or after == ROUNDS) and worst < 10,
     string.format("%s from another thread while next(-1) waits, %d times: nil, err, -ECANCELED "
                   .. "(%d), at once (slowest %.2f s)%s", how, ROUNDS, cancelled, worst,
                   how == "shutdown" and string.format("; then next() at once again and, closed, "
                   .. "nil, err, -EBADF (%d)", after) or ""))
end
anchor:close()
-- the last close of another thread may still be removing its events; wait without
-- forking (a child forked while that close runs holds the events' files until it
-- execs)
local t0 = mono()
while events_left() ~= 0 and mono() - t0 < 10 do C.poll(nil, 0, 100) end
ok(events_left() == 0, "no uprobe events left once the closes are done (" .. events_left() .. ")")
tap.done()
