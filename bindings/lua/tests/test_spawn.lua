-- test_spawn.lua - TAP tests of uevent.spawn (a program started under the session loses
-- none of its first marks) and of the event a sample names (event_index, event_name).
local ffi = require "ffi"
local uevent = require "uevent"

local tap = require "tests.tap"
local ok, skip = tap.ok, tap.skip

local top_srcdir = os.getenv("top_srcdir") or "../../.."
local top_builddir = os.getenv("top_builddir") or top_srcdir

pcall(ffi.cdef, [[
unsigned int getuid(void);
int access(const char *path, int mode);
int waitpid(int pid, int *status, int options);
int usleep(unsigned int usec);
int dup(int fd);
int dup2(int fd, int fd2);
int open(const char *path, int flags, ...);
int close(int fd);
]])

-- a perf.data of one event: each sample's event_index names it
local pf = assert(uevent.perf_data(top_srcdir .. "/t/data/clock.perf.data"))
local idx, n = {}, 0
for rec in pf:records() do
  if rec.sample then idx[rec.sample.event_index] = true; n = n + 1 end
end
ok(n > 0 and idx[0] and next(idx, next(idx)) == nil and pf:event_name(0) == "task-clock" and
   pf:events()[1] == "task-clock" and select(3, pf:event_name(1)) == -22,
   "perf_data: every sample's event_index is 0, event_name(0) task-clock, event 1 is EINVAL")
pf:close()
pf = assert(uevent.perf_data(top_srcdir .. "/t/data/clock.perf.data"))
local first
for rec in pf:records() do if rec.sample then first = rec; break end end
local _, ferr, fcode = pf:raw_fields(first)
ok(fcode == -2, "raw_fields of a task-clock sample: ENOENT (" .. tostring(ferr) .. ")")
pf:close()

-- a tracepoint's fields by name (perf record, root; libtraceevent at configure)
local perf = os.getenv("PERF") or ""
local swdata = tap.tmpname()
if ffi.C.getuid() ~= 0 or perf == "" or
   os.execute(perf .. " record -q -N -e sched:sched_switch -o " .. swdata .. " -- sleep 0.01 >/dev/null 2>&1") ~= 0 then
  skip(1, "needs root and perf record -e sched:sched_switch")
else
  local sf = assert(uevent.perf_data(swdata))
  local n, good, code, example = 0, 0, nil, nil
  for rec in sf:records() do
    if rec.sample then
      n = n + 1
      local t, _, c = sf:raw_fields(rec)
      local j = sf:raw_fields(rec, true)
      code = code or c
      example = example or t
      if t and j and t:match("prev_pid=(%d+)") == tostring(rec.sample.pid) and
         j:match('"prev_pid": (%d+)') == tostring(rec.sample.pid) then
        good = good + 1
      end
    end
  end
  sf:close()
  if code == -95 then
    skip(1, "libuevent built without libtraceevent")
  else
    ok(n > 0 and good == n, ("raw_fields of %d sched_switch samples by name (%d right): %s")
       :format(n, good, tostring(example)))
  end
end
os.remove(swdata)

local s, err, code = uevent.spawn({ top_builddir .. "/no-such-program" })
ok(s == nil and code == -2, "spawning a missing program: " .. tostring(err))
s, err, code = uevent.spawn({ "t/mark-loop" }, { pid = 1 })
ok(s == nil and code == -22, "spawn refuses a pid: " .. tostring(err))

if ffi.C.getuid() ~= 0 or ffi.C.access("/sys/bus/event_source/devices/uprobe", 0) ~= 0 then
  skip(3, "needs root and uprobes for a usdt session")
  tap.done(true)
end

-- the child's "enabled N of 22" line is not TAP
io.stdout:flush()
local saved, null = ffi.C.dup(1), ffi.C.open("/dev/null", 1)
ffi.C.dup2(null, 1)
-- an ELF that marks first thing (libtool's t/mark-loop is a wrapper script, slower to start)
local prog = top_builddir .. "/t/mark-loop-static"
if ffi.C.access(prog, 1) ~= 0 then prog = top_builddir .. "/t/mark-loop" end
s, err = uevent.spawn({ prog, "22", "spawned right away" })
ffi.C.dup2(saved, 1)
ffi.C.close(saved)
ffi.C.close(null)
if not s then
  ok(false, "spawn: " .. tostring(err))
  skip(2, "no session")
  tap.done(true)
end
local child, status, done, idle, marks = s:pid(), ffi.new("int[1]", -1), false, 0, 0
while idle < 3 do
  local rec, e = s:next(200)
  if rec == nil then error(e) end
  if rec == false then
    if not done then done = ffi.C.waitpid(child, status, 1) == child end
    if done then idle = idle + 1 end
  elseif rec.uevent and rec.sample_id.pid == child and rec.uevent.payload.text == "spawned right away" then
    marks = marks + 1
  end
end
if not done then ffi.C.waitpid(child, status, 0) end
ok(marks == 22 and status[0] == 0, "spawn: a program marking at once gives " .. marks .. " of 22 marks")
local names = s:events()
ok(#names > 0 and names[1] == s:event_name(0) and names[#names]:match(":emit4096$") ~= nil and
   select(3, s:event_name(#names)) == -22,
   "the session's events are named: " .. table.concat(names, ", "))
s:close()

-- records() waits for the marks and ends when the watched program has exited, as
-- Python's `for rec in session` and Rust's iterator do; records(0) does not wait
io.stdout:flush()
saved, null = ffi.C.dup(1), ffi.C.open("/dev/null", 1)
ffi.C.dup2(null, 1)
s = assert(uevent.spawn({ prog, "9", "until it exits" }))
ffi.C.dup2(saved, 1)
ffi.C.close(saved)
ffi.C.close(null)
local early, got = 0, 0
for _ in s:records(0) do early = early + 1 end
for rec in s:records() do
  if rec.uevent and rec.uevent.payload.text == "until it exits" then got = got + 1 end
end
-- records() ended: the program has exited (its EXIT record comes just before the
-- kernel makes it a zombie: reaped with WNOHANG within a second), nothing is left
local exited = false
for _ = 1, 100 do
  exited = ffi.C.waitpid(s:pid(), status, 1) == s:pid()
  if exited then break end
  ffi.C.usleep(10000)
end
local more = s:next(0)
if not exited then ffi.C.waitpid(s:pid(), status, 0) end
s:close()
-- (under load records(0) may already take all 9: what matters is where records() ends)
ok(got + early >= 9 and exited and more == false,
   ("records() waits until the program exits: %d + %d (records(0) first) of 9 marks, then none")
   :format(got, early))
tap.done(true)
