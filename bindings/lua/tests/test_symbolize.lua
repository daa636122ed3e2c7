-- test_symbolize.lua - TAP tests of uevent.symbolize: made-up kallsyms and perf map files,
-- errors, and the golden perf.data files fed through it.
local symbolize = require "uevent.symbolize"
local tap = require "tests.tap"
local ok = tap.ok

local top_srcdir = os.getenv("top_srcdir") or "../../.."
local tmp = tap.tmpname()
os.remove(tmp)
os.execute("mkdir -p '" .. tmp .. "'")
local function write(p, s) local h = assert(io.open(p, "w")); h:write(s); h:close() end
write(tmp .. "/kallsyms", "ffffffff81000000 T _stext\nffffffff81000100 T kfunc\n")
write(tmp .. "/perf-4242.map", "7f0000100000 40 Lua:hot loop.lua:3\n")

local s = assert(symbolize.new{ kallsyms = tmp .. "/kallsyms", perf_map_dir = tmp })
local k = s:lookup(1, 0xffffffff81000104ULL, 10)
ok(k.name == "kfunc" and k.offset == 4 and k.dso == "[kernel.kallsyms]" and k.source == "kernel",
   "kernel symbol from a kallsyms file")
local m = s:lookup(4242, 0x7f0000100008ULL)
ok(m.name == "Lua:hot loop.lua:3" and m.source == "perf_map", "perf map line, spaces kept")
local n = s:lookup(4243, 0x1000, 5)
ok(n.name == nil and n.dso == nil and n.source == "none", "nothing names it: name nil")
ok(s:comm(1, 5) == nil, "comm of an unknown thread: nil")
write(tmp .. "/perf-4244.map", "7f0000100000 40 _ZN2at8internal15invoke_parallelEl\n")
local c = s:lookup(4244, 0x7f0000100008ULL)
local raw = assert(symbolize.new{ perf_map_dir = tmp, demangle = false }):lookup(4244, 0x7f0000100008ULL)
ok(c.name == "at::internal::invoke_parallel(long)" and
   raw.name == "_ZN2at8internal15invoke_parallelEl",
   "C++ names demangled, raw with demangle = false (" .. tostring(c.name) .. ")")
local r, err, code = s:feed_file(tmp .. "/missing.data")
ok(r == nil and code == -2 and err:find("missing.data", 1, true), "feed_file of a missing file: nil, err, -ENOENT")
local r2, _, code2 = symbolize.new{ debug_dir = 42 }
ok(r2 == nil and code2 == -22, "a bad option: nil, err, -EINVAL")
local fed = s:feed_file(top_srcdir .. "/t/data/clock.perf.data")
ok(type(fed) == "number", "a golden perf.data feeds (" .. tostring(fed) .. " side-band records)")
local uevent = require "uevent"
local one = assert(symbolize.new())
local pf = assert(uevent.perf_data(top_srcdir .. "/t/data/clock.perf.data"))
local used = 0
while true do
  local rec = pf:next()
  if not rec then break end
  if one:feed_last() then used = used + 1 end
end
ok(used == fed, "feed_last after each next(): as many used as feed_file (" .. used .. ")")
-- the record the reader last gave points into its file's mapping, which close() unmaps
pf = assert(uevent.perf_data(top_srcdir .. "/t/data/clock.perf.data"))
local rec
repeat rec = pf:next() until not rec or rec.record == "MMAP" or rec.record == "MMAP2"
pf:close()
local r3, _, code3 = one:feed_last()
ok(rec and r3 == nil and code3 == -22, "feed_last after its reader's close(): nil, err, -EINVAL")
one:close()
s:close()
ok(not pcall(s.lookup, s, 1, 1), "a closed symbolizer raises")
os.execute("rm -rf '" .. tmp .. "'")
tap.done(true)
