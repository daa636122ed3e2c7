-- test_reader.lua - TAP tests of the LuaJIT reader API: rings, perf.data against the C
-- decoder (`uevent dump --json`), live sessions on this process's usdt marks, errors,
-- and handles dropped without an fd leak.
local ffi = require "ffi"
local bit = require "bit"
local uevent = require "uevent"

local tap = require "tests.tap"
local ok, skip, diag = tap.ok, tap.skip, tap.diag

local top_srcdir = os.getenv("top_srcdir") or "../../.."
local top_builddir = os.getenv("top_builddir") or top_srcdir
local data = top_srcdir .. "/t/data/"
local uevent_cli = top_builddir .. "/tools/uevent"
local function slurp(p) local h = assert(io.open(p, "rb")); local s = h:read("*a"); h:close(); return s end
local EINVAL, ENOENT, EBADF, ENOSPC = -22, -2, -9, -28

pcall(ffi.cdef, [[
int getpid(void);
unsigned int getuid(void);
int fcntl(int fd, int cmd, ...);
int access(const char *path, int mode);
int open(const char *path, int flags, ...);
int close(int fd);
]])
local pid = ffi.C.getpid()

-- ---- a tiny JSON reader: numbers are kept as their literal text (u64s exceed a double)
local function json_decode(s)
  local pos = 1
  local function ws() pos = s:find("[^ \t\r\n]", pos) or #s + 1 end
  local value
  local function str()
    local out = {}
    pos = pos + 1
    while true do
      local c = s:sub(pos, pos)
      if c == '"' then pos = pos + 1; return table.concat(out) end
      if c == "" then error("unterminated string") end
      if c == "\\" then
        local e = s:sub(pos + 1, pos + 1)
        if e == "u" then
          local cp = tonumber(s:sub(pos + 2, pos + 5), 16)
          assert(cp < 0x80, "only ASCII \\u escapes expected")
          out[#out + 1] = string.char(cp)
          pos = pos + 6
        else
          out[#out + 1] = ({ n = "\n", t = "\t", r = "\r", b = "\b", f = "\f" })[e] or e
          pos = pos + 2
        end
      else
        out[#out + 1] = c
        pos = pos + 1
      end
    end
  end
  function value()
    ws()
    local c = s:sub(pos, pos)
    if c == "{" then
      local t = {}
      pos = pos + 1; ws()
      if s:sub(pos, pos) == "}" then pos = pos + 1; return t end
      while true do
        ws()
        local k = str()
        ws(); assert(s:sub(pos, pos) == ":", "':' expected"); pos = pos + 1
        t[k] = value()
        ws()
        c = s:sub(pos, pos); pos = pos + 1
        if c == "}" then return t end
        assert(c == ",", "',' expected at " .. pos)
      end
    elseif c == "[" then
      local t = {}
      pos = pos + 1; ws()
      if s:sub(pos, pos) == "]" then pos = pos + 1; return t end
      while true do
        t[#t + 1] = value()
        ws()
        c = s:sub(pos, pos); pos = pos + 1
        if c == "]" then return t end
        assert(c == ",", "',' expected at " .. pos)
      end
    elseif c == '"' then
      return str()
    elseif s:find("^true", pos) then pos = pos + 4; return true
    elseif s:find("^false", pos) then pos = pos + 5; return false
    elseif s:find("^null", pos) then pos = pos + 4; return ffi.NULL
    else
      local num = s:match("^-?%d+%.?%d*[eE]?[-+]?%d*", pos)
      assert(num and #num > 0, "bad JSON at " .. pos .. ": " .. s:sub(pos, pos + 20))
      pos = pos + #num
      return { num = num }
    end
  end
  local v = value()
  ws()
  assert(pos > #s, "trailing JSON")
  return v
end

-- ---- canonical form: what C prints as JSON, from a Lua record -----------------------
local u64_t, i64_t = ffi.typeof("uint64_t"), ffi.typeof("int64_t")
local function numtext(v)
  if type(v) == "number" then
    return (v == math.floor(v) and math.abs(v) < 2^53) and ("%d"):format(v) or ("%.17g"):format(v)
  end
  if ffi.istype(u64_t, v) or ffi.istype(i64_t, v) then return (tostring(v):gsub("U?LL$", "")) end
  return nil
end
local function hex(s)
  return (s:gsub(".", function(c) return ("%02x"):format(c:byte()) end))
end
-- members C prints as lowercase hex: byte blobs
local HEX = { raw = true, stack_user = true, tls_user = true, aux = true, data = true,
              build_id = true, tag = true, context_trace_id = true, context_span_id = true }

-- Compare JSON value j with Lua value v at path; returns nil or the first difference.
local function same(j, v, path, key)
  if type(j) == "table" and j.num then
    local t = numtext(v)
    if t ~= j.num then return path .. ": C " .. j.num .. ", Lua " .. tostring(v) end
    return nil
  end
  if type(j) == "string" then
    if type(v) ~= "string" then return path .. ": C string, Lua " .. type(v) end
    local lv = HEX[key] and hex(v) or v
    if lv ~= j then return path .. ": C '" .. j .. "', Lua '" .. lv .. "'" end
    return nil
  end
  if type(j) == "boolean" then
    if v ~= j then return path .. ": C " .. tostring(j) .. ", Lua " .. tostring(v) end
    return nil
  end
  if type(j) == "table" then
    if type(v) ~= "table" then return path .. ": C table, Lua " .. type(v) end
    if #j > 0 or next(j) == nil then         -- an array (or empty)
      if #j ~= #v then return path .. ": C " .. #j .. " elements, Lua " .. #v end
      for i = 1, #j do
        local d = same(j[i], v[i], path .. "[" .. i .. "]", key)
        if d then return d end
      end
      return nil
    end
    for k, jv in pairs(j) do
      if v[k] == nil then return path .. "." .. k .. ": missing in Lua" end
      local d = same(jv, v[k], path .. "." .. k, k)
      if d then return d end
    end
    return nil
  end
  return path .. ": unexpected JSON value " .. tostring(j)
end

-- Every key of the Lua table is printed by C too (the other direction of field by field).
local function extra_keys(jt, lt, path, allowed)
  for k, v in pairs(lt) do
    if not (allowed and allowed[k]) then
      if jt[k] == nil then return path .. "." .. k .. ": only in Lua" end
      if type(v) == "table" and type(jt[k]) == "table" and not jt[k].num and #v == 0
         and next(v) ~= nil then
        local d = extra_keys(jt[k], v, path .. "." .. k)
        if d then return d end
      end
    end
  end
  return nil
end

-- The uevent's decoded payload keys, as `uevent dump --json` prints them beside it.
local function payload_view(p)
  local t = { type_name = p.kind == "raw" and (uevent.lib.uevent_type_name(p.type) ~= nil
              and ffi.string(uevent.lib.uevent_type_name(p.type)) or "user") or p.kind }
  if p.kind == "text" then t.text = p.text
  elseif p.kind == "counter" then t.name, t.value = p.name, p.value
  elseif p.kind == "range_begin" then
    t.id, t.parent, t.name = p.id, p.parent, p.name
    t.async = bit.band(p.flags, uevent.lib.UEVENT_RANGE_ASYNC) ~= 0
  elseif p.kind == "range_end" then t.id = p.id
  elseif p.kind == "raw" then
    t.hex = hex(p.data:sub(1, 64)) .. (#p.data > 64 and "..." or "")
  end
  return t
end

-- Flat keys C prints beside the members (older output, kept): where each comes from.
local ALIAS = { task_pid = { "task", "pid" }, bpf_id = { "bpf_event", "id" },
                bpf_type = { "bpf_event", "type" }, tls_bytes = { "sample", "tls_user_dyn_size" },
                event_index = { "sample", "event_index" } }
local PAYLOAD = { type_name = true, text = true, name = true, value = true, id = true,
                  parent = true, async = true, hex = true }

-- One record: C's JSON object j against the Lua table r, both ways (names: the file's
-- event names, which a sample's "event" is). nil or a difference.
local function compare_record(j, r, names)
  local member = uevent.record_member(r)
  local body = r[member]
  if j[member] == nil then return member .. ": missing in C's JSON" end
  local pv = member == "uevent" and payload_view(body.payload) or {}
  for k, jv in pairs(j) do
    local d
    if k == "record" or k == "record_type" or k == "misc" or k == "size" or k == "transport" then
      d = same(jv, r[k], k, k)
    elseif k == "sample_id" then
      d = same(jv, r.sample_id, k) or extra_keys(jv, r.sample_id, k)
    elseif k == "time" or k == "pid" or k == "tid" or k == "cpu" then
      d = same(jv, r.sample_id[k] or 0, k, k)      -- 0 when the record lacks it
    elseif k == member then
      d = same(jv, body, k) or extra_keys(jv, body, k, { payload = true })
    elseif k == "event" and (member == "sample" or member == "uevent") then
      d = same(jv, names and names[body.event_index + 1], k, k)
    elseif ALIAS[k] and ALIAS[k][1] == member then
      d = same(jv, body[ALIAS[k][2]], k, ALIAS[k][2])
    elseif member == "uevent" and k == "type" then
      d = same(jv, body.type, k, k)
    elseif member == "uevent" and PAYLOAD[k] then
      d = same(jv, pv[k], k, k)
    elseif body[k] ~= nil then
      d = same(jv, body[k], k, k)
    else
      d = k .. ": a key of C's not checked against Lua"
    end
    if d then return d end
  end
  if j.sample_id == nil and next(r.sample_id) ~= nil then return "sample_id: only in Lua" end
  for k in pairs(r) do
    if k ~= "sample_id" and j[k] == nil then return k .. ": only in Lua" end
  end
  return nil
end

-- Two Lua values equal all the way down (64-bit cdata by value).
local function deep_diff(a, b, path)
  if type(a) == "table" and type(b) == "table" then
    for k, v in pairs(a) do
      local d = deep_diff(v, b[k], path .. "." .. tostring(k))
      if d then return d end
    end
    for k in pairs(b) do
      if a[k] == nil then return path .. "." .. tostring(k) .. ": only in the second" end
    end
    return nil
  end
  local na, nb = numtext(a), numtext(b)
  if na and nb then return na ~= nb and (path .. ": " .. na .. " vs " .. nb) or nil end
  if a ~= b then return path .. ": " .. tostring(a) .. " vs " .. tostring(b) end
  return nil
end

-- ---- perf.data files against `uevent dump --json` -----------------------------------
local function dump_json(path)
  local p = io.popen("'" .. uevent_cli .. "' dump --json '" .. path .. "' 2>&1")
  local lines = {}
  for l in p:lines() do lines[#lines + 1] = l end
  local okc = p:close()
  return lines, okc
end

local has_full_json = false
do
  local lines = dump_json(data .. "usdt.perf.data")
  for _, l in ipairs(lines) do
    if l:find('"sample_id"', 1, true) then has_full_json = true; break end
  end
end

local perf_files = {}
do
  local ls = io.popen("ls '" .. data .. "'")
  for fn in ls:lines() do
    if fn:match("%.perf%.data$") then perf_files[#perf_files + 1] = fn end
  end
  ls:close()
end
ok(#perf_files >= 3, "t/data holds perf.data files (" .. table.concat(perf_files, " ") .. ")")

local decoded = {}
for _, fn in ipairs(perf_files) do
  local path = data .. fn
  local pf, err, code = uevent.perf_data(path)
  if not pf then
    ok(false, fn .. ": opens (" .. tostring(err) .. ")")
  else
    local recs = {}
    for r in pf:records() do recs[#recs + 1] = r end
    local names = pf:events()
    pf:close()
    decoded[fn] = recs
    local lines = dump_json(path)
    if not has_full_json then
      skip(1, fn .. ": `uevent dump --json` does not print every field yet (needs main's 'dump --json: every field')")
    else
      local diff
      if #lines ~= #recs then
        diff = ("C prints %d records, Lua decodes %d"):format(#lines, #recs)
      else
        for i, l in ipairs(lines) do
          local okj, j = pcall(json_decode, l)
          if not okj then diff = "record " .. i .. ": bad JSON: " .. j; break end
          local d = compare_record(j, recs[i], names)
          if d then diff = "record " .. i .. " (" .. recs[i].record .. "): " .. d; break end
        end
      end
      ok(diff == nil, ("%s: %d records agree with `uevent dump --json` field by field%s")
         :format(fn, #recs, diff and (": " .. diff) or ""))
    end
  end
end

-- The comparison itself notices a changed nested value, a member C lacks, one Lua lacks.
do
  local path = data .. "perf_records.le.perf.data"
  local lines, pf = dump_json(path), uevent.perf_data(path)
  local j, r
  if pf and has_full_json then
    for i, rec in ipairs(decoded["perf_records.le.perf.data"] or {}) do
      if rec.record == "SAMPLE" then j, r = json_decode(lines[i]), rec; break end
    end
  end
  if not r then
    skip(1, "no perf_records.le.perf.data sample with a full dump --json to check the checker on")
  else
    local names = pf:events()
    local clean = compare_record(j, r, names)
    local v = r.sample.read.values[2][3]
    r.sample.read.values[2][3] = v + 1
    local changed = compare_record(j, r, names)
    r.sample.read.values[2][3] = v
    r.sample.extra = 1
    local extra = compare_record(j, r, names)
    r.sample.extra = nil
    local aux = r.sample.aux
    r.sample.aux = nil
    local missing = compare_record(j, r, names)
    r.sample.aux = aux
    ok(clean == nil and changed and changed:find("read.values") and extra and extra:find("extra")
       and missing and missing:find("aux"),
       "the checker catches a changed read value, an extra and a missing member ("
       .. tostring(changed) .. "; " .. tostring(extra) .. "; " .. tostring(missing) .. ")")
  end
  if pf then pf:close() end
end

-- The records of perf_records.<bo>.bin, decoded by Lua from the raw bytes, with the
-- attr that make-perf-golden.py wrote them for (test data, not binding constants).
local golden_fmt = {
  sample_type = 0x3ffbfff, read_format = 31, branch_sample_type = bit.lshift(1, 17),
  sample_regs_user = 7, sample_regs_intr = 3, sample_id_all = true,
}
for _, tb in ipairs { { "le", "little" }, { "be", "big" } } do
  local tag, bo = tb[1], tb[2]
  local recs = {}
  for r in uevent.perf_records(slurp(data .. "perf_records." .. tag .. ".bin"), golden_fmt, bo) do
    recs[#recs + 1] = r
  end
  local s = recs[1] and recs[1].sample or {}
  ok(#recs == 16 and recs[1].record == "SAMPLE" and s.ip == 0x401000 and s.pid == 100 and s.tid == 101
     and s.time == 5000 and s.addr == 0xdead0000 and s.cpu == 1 and s.period == 4000
     and s.read.nr == 2 and s.read.time_enabled == 111 and s.read.time_running == 99
     and #s.read.values == 2 and s.read.values[2][1] == 20 and s.read.values[2][2] == 9
     and s.read.values[2][3] == 3 and s.callchain_nr == 3 and s.callchain[3] == 0x401200
     and s.raw == "RAWDATA\0\1\2\3\4" and s.branch_nr == 1 and s.branch_hw_idx == 5
     and s.branch_entries[1][1] == 0x1000 and s.branch_entries[1][2] == 0x2000
     and s.branch_entries[1][3] == 3 and #s.branch_counters == 0
     and s.regs_user_abi == 2 and #s.regs_user == 3 and s.regs_user[3] == 13
     and #s.stack_user == 16 and s.stack_user:byte(16) == 15 and s.stack_user_dyn_size == 12
     and s.weight == 300 and s.weight_var2 == 4 and s.weight_var3 == 5
     and s.data_src == 0x68100142 and s.transaction == 0x10 and s.regs_intr[2] == 22
     and s.phys_addr == 0x12345000 and s.cgroup == 77 and s.code_page_size == 2097152
     and s.tls_user == "TLS:trace-0123456789ab\0\0" and s.tls_user_dyn_size == 24
     and s.aux == "AUXBYTES",
     "perf_records." .. tag .. ".bin: 16 records; the sample's every member as written")
  local by = {}
  for _, r in ipairs(recs) do by[#by + 1] = r.record end
  local m = recs[4] and recs[4].mmap or {}
  local b = recs[15] and recs[15].bpf_event or {}
  local u = recs[16] and recs[16].uevent or {}
  local sid = recs[2] and recs[2].sample_id or {}
  ok(table.concat(by, " ") == "SAMPLE MMAP MMAP2 MMAP2 COMM FORK EXIT LOST LOST_SAMPLES THROTTLE "
     .. "UNTHROTTLE SWITCH SWITCH_CPU_WIDE KSYMBOL BPF_EVENT UEVENT"
     and sid.pid == 100 and sid.tid == 101 and sid.time == 5000 and sid.id == 7 and sid.stream_id == 8
     and sid.cpu == 1 and sid.identifier == 7
     and recs[2].mmap.filename == "/bin/true" and recs[3].mmap.ino == 1234 and recs[3].mmap.maj == 8
     and m.build_id_size == 20 and m.build_id:byte(1) == 1 and m.build_id:byte(20) == 20
     and m.filename == "/usr/lib/libbuild.so" and recs[5].comm.comm == "demo"
     and recs[6].task.pid == 102 and recs[6].task.ptid == 101 and recs[7].task.time == 6000
     and recs[8].lost.id == 7 and recs[8].lost.lost == 42 and recs[9].lost.lost == 5
     and recs[10].throttle.time == 5100 and recs[11].throttle.time == 5200
     and recs[13].sw.next_prev_pid == 200 and recs[14].ksymbol.addr == 0xffffffffc0001000ULL
     and recs[14].ksymbol.name == "bpf_prog_6deef7357e7b4530_x" and b.id == 42 and b.type == 1
     and b.tag == "\x6d\xee\xf7\x35\x7e\x7b\x45\x30" and u.type == 0 and u.data == "hello perf\0"
     and u.payload.text == "hello perf" and recs[16].transport ~= nil,
     "perf_records." .. tag .. ".bin: side-band records, sample_id trailers and the uevent as written")
  -- the same records through the perf.data reader (main's pipe-mode copies), when present
  local fn = "perf_records." .. tag .. ".perf.data"
  if decoded[fn] then
    local mine = {}
    for _, r in ipairs(decoded[fn]) do
      if r.record_type < 64 then mine[#mine + 1] = r end
    end
    local diff = #mine ~= #recs and ("%d records, not %d"):format(#mine, #recs) or nil
    for i = 1, #recs do
      -- a bare decode knows no events: its samples and uevents are of event -1, the
      -- file's of 0
      local a, b = recs[i].sample or recs[i].uevent, mine[i] and (mine[i].sample or mine[i].uevent)
      if a and b then
        if a.event_index ~= -1 or b.event_index ~= 0 then
          diff = diff or ("record %d: event_index %s, the file's %s"):format(i, a.event_index, b.event_index)
        end
        a.event_index = b.event_index
      end
      diff = diff or deep_diff(recs[i], mine[i], "record " .. i)
    end
    ok(diff == nil, fn .. ": the perf.data reader gives the same " .. #recs
       .. " records, member by member, as the raw bytes decode to" .. (diff and (": " .. diff) or ""))
  else
    skip(1, fn .. " not in t/data yet")
  end
end

-- ---- the ring helper over t/data/ring.le.bin -----------------------------------------
do
  local img = slurp(data .. "ring.le.bin")
  if not ffi.abi("le") then
    skip(7, "the ring image is little-endian")
  elseif #img ~= 8192 then
    skip(7, "t/data/ring.le.bin is not an 8192-byte image")
  else
    local map = ffi.new("uint8_t[?]", #img)
    ffi.copy(map, img, #img)
    -- struct perf_event_mmap_page: data_head at 1024, data_tail at 1032
    local head_p = ffi.cast("uint64_t *", map + 1024)
    local tail_p = ffi.cast("uint64_t *", map + 1032)
    local head, tail = head_p[0], tail_p[0]
    local res, msg, code = uevent.ring_read(map, #img, 16)
    ok(res == nil and code == ENOSPC and tail_p[0] == tail,
       "ring_read: a record larger than cap is nil, err, -ENOSPC (" .. tostring(msg) .. ")")
    -- a negative cap was a SIZE_MAX one to C, over a 1-byte buffer
    local neg, _, neg_code = uevent.ring_read(map, #img, -1)
    local neg_map, _, neg_map_code = uevent.ring_read(map, -1)
    ok(neg == nil and neg_code == EINVAL and neg_map == nil and neg_map_code == EINVAL and tail_p[0] == tail,
       "ring_read: a negative cap or map_size is nil, err, -EINVAL"
       .. (neg and " (not " .. #neg .. " bytes written to a 1-byte buffer)" or ""))
    local bytes = assert(uevent.ring_read(map, #img))
    ok(#bytes == tonumber(head - tail) and tail_p[0] == head,
       "ring_read: " .. #bytes .. " bytes, data_tail advanced to data_head")
    -- the bytes as they sit in the ring: the wrapping record's two halves made whole
    local size, off = 4096, tonumber(tail % 4096)
    local ring = img:sub(4097)
    local want = (ring .. ring):sub(off + 1, off + #bytes)
    local fmt = { sample_type = 2 + 4 + 128 + 65536, sample_id_all = 1 } -- TID|TIME|CPU|IDENTIFIER
    local recs = {}
    for r in uevent.perf_records(bytes, fmt) do recs[#recs + 1] = r end
    local u1, l2, u3 = recs[1] or {}, recs[2] or {}, recs[3] or {}
    ok(bytes == want and off + recs[1].size > size and #recs == 3 and u1.record == "UEVENT"
       and u1.sample_id.time == 1000 and u1.uevent.payload.text == "wrapped mark, longer than the 24 bytes left before the end"
       and u1.uevent.size == #"wrapped mark, longer than the 24 bytes left before the end" + 1,
       "ring: the record that wraps comes out whole, byte for byte")
    ok(l2.record == "LOST" and l2.lost.id == 7 and l2.lost.lost == 3 and l2.sample_id.time == 2000
       and u3.record == "UEVENT" and u3.uevent.payload.text == "after" and u3.sample_id.time == 3000
       and u3.sample_id.pid == 100 and u3.sample_id.cpu == 1,
       "ring: then the LOST record (3 lost) and the next uevent")
    ok(uevent.ring_read(map, #img) == "", "ring_read: empty ring reads as \"\"")
    head_p[0] = tail_p[0] + 8192
    res, msg, code = uevent.ring_read(map, #img)
    ok(res == nil and code == EINVAL and tail_p[0] == head_p[0],
       "ring_read: head - tail > size is nil, err, -EINVAL and the tail catches up")
  end
end

-- ---- errors ------------------------------------------------------------------------
local tmp = tap.tmpname()
local res, msg, code = uevent.perf_data(tmp .. "-missing.perf.data")
ok(res == nil and code == ENOENT and msg:find("missing", 1, true),
   "perf_data(missing): nil, err, -ENOENT (" .. tostring(msg) .. ")")
local f = io.open(tmp, "wb"); f:write(("not a perf.data file at all "):rep(10)); f:close()
res, msg, code = uevent.perf_data(tmp)
ok(res == nil and code == EINVAL, "perf_data(not perf.data): nil, err, -EINVAL (" .. tostring(msg) .. ")")
res, msg, code = uevent.perf_data(42)
ok(res == nil and code == EINVAL, "perf_data(42): nil, err, -EINVAL")
do
  -- cut inside its last record (a killed writer): the whole records, then nil, err, -ENODATA
  local ENODATA = -61
  local function cut(name, len)
    local whole = slurp(data .. name)
    f = io.open(tmp, "wb"); f:write(whole:sub(1, len(#whole))); f:close()
    local pf = assert(uevent.perf_data(tmp))
    local got, r, e, c = 0
    repeat r, e, c = pf:next(); if r then got = got + 1 end until not r
    local at = pf:offset()
    local again = select(3, pf:next())
    pf:close()
    return got, c, e, at, again
  end
  local got, c, e, at, again = cut("usdt.pipe.perf.data", function(n) return n - 3 end)
  ok(got > 0 and c == ENODATA and again == ENODATA and e:find("offset " .. at, 1, true),
     ("pipe-mode perf.data cut short: %d records, then nil, err, -ENODATA, again (%s)"):format(got, tostring(e)))
  -- file mode whose data section is cut (the header says more): the same
  got, c, e, at = cut("usdt.perf.data", function(n) return math.floor(n / 2) end)
  ok(got > 0 and c == ENODATA and at < #slurp(data .. "usdt.perf.data") / 2,
     ("perf.data with its data section cut: %d records, then nil, err, -ENODATA at %d"):format(got, at))
  local okc, err = pcall(function()
    f = io.open(tmp, "wb"); f:write(slurp(data .. "usdt.pipe.perf.data"):sub(1, -4)); f:close()
    for _ in assert(uevent.perf_data(tmp)):records() do end
  end)
  ok(not okc and tostring(err):find("offset"), "records() raises on a recording cut short (" .. tostring(err) .. ")")
end
os.remove(tmp)
do
  local pf = assert(uevent.perf_data(data .. "usdt.perf.data"))
  pf:close(); pf:close()
  res, msg, code = pf:next()
  ok(res == nil and code == EBADF and tostring(pf) == "uevent.perf_data: closed",
     "perf_data: close is idempotent; next on a closed handle is nil, err, -EBADF")
end
local rec_bytes = slurp(data .. "perf_records.le.bin")
res, msg, code = uevent.decode_perf_record(rec_bytes:sub(1, 100), golden_fmt, "little")
ok(res == nil and code == EINVAL, "decode_perf_record of a cut sample: nil, err, -EINVAL")
res, msg, code = uevent.decode_perf_record(rec_bytes, golden_fmt, "sideways")
ok(res == nil and code == EINVAL, "decode_perf_record with a bad byte order: -EINVAL")
res, msg, code = uevent.session { transports = { "carrier-pigeon" } }
ok(res == nil and code == EINVAL and msg:find("carrier%-pigeon"),
   "session{unknown transport}: nil, err, -EINVAL (" .. tostring(msg) .. ")")
res, msg, code = uevent.session { ring_pages = "many" }
ok(res == nil and code == EINVAL, "session{ring_pages = 'many'}: nil, err, -EINVAL")
res, msg, code = uevent.session { ring_pages = -1 }
ok(res == nil and code == EINVAL, "session{ring_pages = -1}: nil, err, -EINVAL")
for _, c in ipairs { { { pid = -2 }, "pid %-2" }, { { ring_pages = 3 }, "ring_pages 3" },
                     { { tls_user = 65536 }, "tls_user 65536" }, { { ring_pages = 2^32 }, "ring_pages" },
                     { { usdt_path = 5 }, "usdt_path" } } do
  res, msg, code = uevent.session(c[1])
  ok(res == nil and code == EINVAL and tostring(msg):find(c[2]),
     "session{" .. c[2]:gsub("%%", "") .. "}: nil, err, -EINVAL naming it (" .. tostring(msg) .. ")")
end
res, msg, code = uevent.session { transports = { "file" } }
ok(res == nil and code < 0 and type(msg) == "string",
   "session over the file transport: nil, err, -errno (" .. tostring(msg) .. ")")
res, msg, code = uevent.session { pid = 0x3ffffff0, transports = { "usdt" } }
ok(res == nil and code == -3 and msg:find("No such process", 1, true),
   "session{a missing pid}: nil, err, -ESRCH (" .. tostring(msg) .. ")")

-- ---- live: this process's usdt marks through a session -------------------------------
local function nfds()
  local c = 0
  for fd = 0, 4095 do
    if ffi.C.fcntl(fd, 1) >= 0 then c = c + 1 end -- F_GETFD
  end
  return c
end

-- ---- batches: read_batch's columns against the per-record tables of the same files ----
local function num(v) return (tostring(v):gsub("U?LL$", "")) end
local function row(...)
  local t = { ... }
  for i = 1, select("#", ...) do t[i] = type(t[i]) == "string" and t[i] or num(t[i]) end
  return table.concat(t, " ")
end
local function per_record_rows(path)
  local sm, ue, code = {}, {}, nil
  local pf = assert(uevent.perf_data(path))
  while true do
    local rec, _, c = pf:next()
    if rec == false then break end
    if rec == nil then code = c; if c ~= -71 then break end
    elseif rec.sample then
      local x = rec.sample
      local chain = {}
      for k, ip in ipairs(x.callchain or {}) do chain[k] = num(ip) end
      sm[#sm + 1] = row(x.time, x.pid, x.tid, x.cpu, x.event_index, x.ip, x.period,
                        table.concat(chain, ","))
    elseif rec.uevent then
      local u, id = rec.uevent, rec.uevent.id
      ue[#ue + 1] = row(id.time or 0, id.pid or 0, id.tid or 0, id.cpu or 0, u.event_index,
                        u.type, u.flags, uevent.lib.uevent_transport_from_name(rec.transport), u.data)
    end
  end
  pf:close()
  return sm, ue, code
end
local function batch_rows(path, n)
  local sm, ue, batches, code = {}, {}, 0, nil
  local pf = assert(uevent.perf_data(path))
  while true do
    local b, _, c = pf:read_batch(n)
    if not b then code = c; break end
    batches = batches + 1
    local s, u = b.samples, b.uevents
    for i = 0, s.n - 1 do
      local chain = {}
      for k, ip in ipairs(s:callchain(i)) do chain[k] = num(ip) end
      sm[#sm + 1] = row(s.time[i], s.pid[i], s.tid[i], s.cpu[i], s.event_index[i], s.ip[i],
                        s.period[i], table.concat(chain, ","))
    end
    for i = 0, u.n - 1 do
      ue[#ue + 1] = row(u.time[i], u.pid[i], u.tid[i], u.cpu[i], u.event_index[i], u.type[i],
                        u.flags[i], u.transport[i], u:payload(i))
    end
  end
  pf:close()
  return sm, ue, batches, code
end
local function same_rows(a, b)
  if #a ~= #b then return false end
  for i = 1, #a do if a[i] ~= b[i] then diag(a[i] .. " ~= " .. b[i]); return false end end
  return true
end
for _, fn in ipairs { "perf_records.le.perf.data", "perf_records.be.perf.data", "usdt.perf.data",
                      "usdt.pipe.perf.data", "clock.perf.data" } do
  local ws, wu = per_record_rows(data .. fn)
  local bs, bu, nb, code = batch_rows(data .. fn)
  ok(#ws + #wu > 0 and same_rows(ws, bs) and same_rows(wu, bu) and nb == 1 and code == nil,
     ("%s: read_batch gives the per-record tables' %d samples and %d uevents in one batch")
     :format(fn, #ws, #wu))
end
do
  local ws, wu = per_record_rows(data .. "clock.perf.data")
  local bs, bu, nb = batch_rows(data .. "clock.perf.data", 10)
  ok(same_rows(ws, bs) and same_rows(wu, bu) and nb == math.ceil(math.max(#ws, #wu) / 10),
     ("clock.perf.data in batches of 10: the same rows, %d batches"):format(nb))
  local pf = assert(uevent.perf_data(data .. "perf_records.le.perf.data"))
  local _, err0, zero = pf:read_batch(0)
  local _, _, frac = pf:read_batch(1.5)
  local b = pf:read_batch()
  local s, u = b.samples, b.uevents
  local chain = s:callchain(0)
  ok(zero == EINVAL and frac == EINVAL and s.n >= 1 and u.n >= 1 and #chain == 3 and
     chain[1] == 0x401000 and chain[3] == 0x401200 and u:payload(0) == "hello perf\0" and
     s.chain_n >= 3 and u.data_n >= 11 and pf:read_batch() == false,
     "read_batch(0) and (1.5): nil, err, -EINVAL (" .. tostring(err0) .. "); columns by name, "
     .. "a callchain and a payload as written; false at the end")
  -- the columns are cdata arrays: a row past them was read from past them
  local rows = {}
  for _, i in ipairs { -1, s.n, 2 ^ 28, 0.5 } do
    rows[#rows + 1] = select(3, s:callchain(i)) == EINVAL and select(3, u:payload(i)) == EINVAL
  end
  ok(rows[1] and rows[2] and rows[3] and rows[4], "callchain(i) and payload(i) of no row: nil, err, -EINVAL")
  pf:close()
  local _, _, closed_code = pf:read_batch()
  ok(closed_code == EBADF, "read_batch on a closed reader: nil, err, -EBADF")
  -- cut in the middle of a record: the whole rows first, then -ENODATA
  local img, cut = slurp(data .. "usdt.pipe.perf.data"), tap.tmpname()
  local all_s, all_u = per_record_rows(data .. "usdt.pipe.perf.data")
  local cs, cu, ccode
  for k = 5, #img, 8 do          -- cut short of the end until a uevent is cut
    local h = assert(io.open(cut, "wb")); h:write(img:sub(1, #img - k)); h:close()
    cs, cu, ccode = per_record_rows(cut)
    if #cu < #all_u then break end
  end
  local ks, ku, _, kcode = batch_rows(cut, 50)
  ok(ccode == -61 and kcode == -61 and #cu > 0 and #cu < #all_u and same_rows(cs, ks) and
     same_rows(cu, ku),
     ("a cut file: read_batch gives the %d whole rows, then nil, err, -ENODATA (%s, %s; %d rows)")
     :format(#cs + #cu, tostring(ccode), tostring(kcode), #ks + #ku))
  os.remove(cut)
end

local live_why
if ffi.C.getuid() ~= 0 then live_why = "needs root to add uprobe events"
elseif ffi.C.access("/sys/bus/event_source/devices/uprobe", 0) ~= 0 then live_why = "kernel without uprobes"
elseif not uevent.open { transport = "usdt", ignore_env = true } then
  live_why = "usdt transport unavailable here: " .. uevent.reason()
end
local LIVE_TESTS = 15
local s
if not live_why then
  local err
  -- 256-byte fetches: 500 marks fit the rings, so every one must arrive
  s, err = uevent.session { pid = 0, transports = { "usdt" }, usdt_max_payload = 256 }
  if not s then live_why = "session does not open here: " .. tostring(err) end
end
if live_why then
  skip(LIVE_TESTS, live_why)
else
  local ts = s:transports()
  ok(#ts == 1 and ts[1] == "usdt" and s:fd() >= 0 and uevent.enabled(),
     "session listens on usdt, has a pollable fd, and the semaphore turned marks on (" .. s:reason() .. ")")
  -- record what the session reads to a file: pipe-mode perf.data, read back below
  local rec_path = tap.tmpname()
  local rec_fd = ffi.C.open(rec_path, 1 + 64 + 512, 384) -- O_WRONLY|O_CREAT|O_TRUNC, 0600
  local rec_ok = rec_fd >= 0 and s:record_to(rec_fd)
  local _, _, busy = s:record_to(rec_fd)
  local _, _, badfd = s:record_to(-1)
  local N = 500
  for i = 1, N do
    uevent.mark("lua mark " .. i)
    if i == N / 2 then uevent.counter("queue_depth", -42) end
  end
  local r = uevent.range_begin("lua range")
  uevent.range_end(r)
  local texts, counters, begins, ends, others, pid_ok, order_ok, last = {}, {}, {}, {}, 0, true, true, 0ULL
  for rec in s:records(200) do
    local u = rec.uevent
    if not u then others = others + 1
    else
      if rec.sample_id.pid ~= pid or u.id.pid ~= pid then pid_ok = false end
      if rec.sample_id.time < last then order_ok = false end
      last = rec.sample_id.time
      local p = u.payload
      if p.kind == "text" then texts[#texts + 1] = p.text
      elseif p.kind == "counter" then counters[#counters + 1] = p
      elseif p.kind == "range_begin" then begins[#begins + 1] = p
      elseif p.kind == "range_end" then ends[#ends + 1] = p
      else others = others + 1 end
    end
  end
  local exact = #texts == N
  for i = 1, N do if texts[i] ~= "lua mark " .. i then exact = false; break end end
  ok(exact, ("%d of %d marks, every payload in order"):format(#texts, N))
  ok(#counters == 1 and counters[1].name == "queue_depth" and counters[1].value == -42,
     "the counter: queue_depth = -42")
  ok(#begins == 1 and #ends == 1 and begins[1].name == "lua range" and ends[1].id == begins[1].id
     and begins[1].id == r, "the range: begin and end with the id range_begin returned")
  ok(others == 0 and pid_ok and order_ok, "nothing else, every record from this pid, times in order")
  local st = s:stats()
  ok(st.lost == 0 and st.lost_samples == 0 and st.truncated == 0 and st.corrupt == 0
     and st.uevents == N + 3 and st.records == N + 3,
     ("stats: %d records, %d uevents, lost %d, lost_samples %d, corrupt %d"):format(
       st.records, st.uevents, st.lost, st.lost_samples, st.corrupt))
  ok(s:next(0) == false, "next(0) on a drained session is false")
  ok(s:disable() == true, "disable")
  uevent.mark("while disabled")
  local nd = 0
  for _ in s:records(100) do nd = nd + 1 end
  ok(s:enable() == true and nd == 0, "a disabled session records nothing (" .. nd .. ")")
  uevent.mark("enabled again")
  local back = s:next(1000)
  ok(back and back.uevent.payload.text == "enabled again", "enable: marks flow again")
  s:close(); s:close()
  ffi.C.close(rec_fd)
  local rtexts, rothers = {}, 0
  local rpf = uevent.perf_data(rec_path)
  if rpf then
    for rec in rpf:records() do
      if rec.uevent then
        if rec.uevent.payload.kind == "text" then rtexts[#rtexts + 1] = rec.uevent.payload.text
        else rothers = rothers + 1 end
      end
    end
    rpf:close()
  end
  os.remove(rec_path)
  local same_marks = #rtexts == N + 1
  for i = 1, N do if rtexts[i] ~= texts[i] then same_marks = false end end
  ok(rec_ok == true and same_marks and rtexts[N + 1] == "enabled again" and rothers == 3,
     ("record_to: the recorded perf.data holds the session's %d marks, counter and range (%d texts, %d others)")
     :format(N + 1, #rtexts, rothers))
  ok(busy == -16 and badfd == EINVAL, "record_to twice: -EBUSY; record_to(-1): -EINVAL ("
     .. tostring(busy) .. ", " .. tostring(badfd) .. ")")
  res, msg, code = s:next()
  ok(res == nil and code == EBADF and tostring(s) == "uevent.session: closed",
     "session: close is idempotent; next on a closed session is nil, err, -EBADF")
  -- a session's records as columns: 300 marks read back batch by batch
  local s2 = uevent.session { pid = 0, transports = { "usdt" }, usdt_max_payload = 256 }
  local NMARK, got, batches, in_order = 300, 0, 0, s2 ~= nil
  if s2 then
    for i = 1, NMARK do uevent.mark("batch mark " .. i) end
    while true do
      local b = s2:read_batch(64, 200)
      if not b then break end
      batches = batches + 1
      local u = b.uevents
      for i = 0, u.n - 1 do
        local p = u:payload(i)
        local d = uevent.decode(u.type[i], p, #p)
        got = got + 1
        if not d or d.text ~= "batch mark " .. got or u.pid[i] ~= pid then in_order = false end
      end
    end
    s2:close()
  end
  -- all were waiting: each batch full but the last, or close (not a row a batch)
  ok(in_order and got == NMARK and batches >= NMARK / 64 and batches < NMARK / 8,
     ("session read_batch(64): the %d marks in order, this pid, in %d batches"):format(got, batches))
  -- cpus: a list of CPUs this system lacks is refused; {0} opens
  res, msg, code = uevent.session { pid = 0, transports = { "usdt" }, cpus = "0-4095" }
  local one = uevent.session { pid = 0, transports = { "usdt" }, cpus = { 0 } }
  ok(res == nil and code == EINVAL and tostring(msg):find("cpus", 1, true) and one ~= nil,
     "session{cpus = '0-4095'}: nil, err, -EINVAL (" .. tostring(msg) .. "); cpus = {0} opens")
  if one then one:close() end
  -- overwrite mode: nothing until a snapshot, then the newest records
  -- no_inherit: only our threads; a tree's usdt rings also take other processes' marks
  local ow = assert(uevent.session { pid = 0, transports = { "usdt" }, overwrite = true,
                                     no_inherit = true, ring_pages = 4 })
  for i = 1, 50 do uevent.mark("ow " .. i) end
  local before = ow:next(0)
  local snap = ow:snapshot()
  local got = {}
  for rec in ow:records(0) do got[#got + 1] = rec.uevent.payload.text end
  ow:close()
  local tail_ok = #got > 0 and got[#got] == "ow 50"
  for i = 2, #got do
    if got[i] ~= "ow " .. (50 - #got + i) then tail_ok = false end
  end
  ok(before == false and snap == true and tail_ok,
     ("overwrite: nothing before snapshot(), then the newest %d marks, ending with ow 50"):format(#got))
end
if live_why then skip(1, live_why) end

-- ---- handles dropped without close: no fd leak ---------------------------------------
collectgarbage(); collectgarbage()
local fds = nfds()
for _ = 1, 10000 do
  local h = assert(uevent.perf_data(data .. "usdt.perf.data"))
  h:next()
end
collectgarbage(); collectgarbage()
local after = nfds()
ok(after == fds, "10000 perf_data handles dropped without close: no fd leak (" .. fds .. " -> " .. after .. ")")
-- Each usdt session adds and removes a uprobe event, which the kernel takes ~70 ms to
-- remove: 10000 of them take a quarter of an hour. UEVENT_LUA_SESSIONS sets the count.
local NS = tonumber(os.getenv("UEVENT_LUA_SESSIONS") or "") or 30
if live_why then
  skip(2, live_why)
else
  collectgarbage(); collectgarbage()
  fds = nfds()
  local opened = 0
  for i = 1, NS do
    local h = uevent.session { pid = 0, transports = { "usdt" }, ring_pages = 1 }
    if h then opened = opened + 1 end
    if i % 2 == 0 and h then h:close() end -- half closed early, then collected too
  end
  collectgarbage(); collectgarbage()
  after = nfds()
  ok(opened == NS and after == fds,
     ("%d sessions (half closed, all dropped): no fd leak (%d -> %d)"):format(NS, fds, after))
  -- 2000 more, of a kind that needs no uprobe: the dummy event of BPF_EVENT records
  -- (each opens an event per CPU and maps its ring: ~5 ms; enough for many collections)
  local NB = 2000
  opened = 0
  for i = 1, NB do
    local h = uevent.session { pid = 0, transports = { "prctl" }, bpf_events = true }
    if h then opened = opened + 1 end
    if i % 2 == 0 and h then h:close() end
  end
  collectgarbage(); collectgarbage()
  after = nfds()
  ok(opened == NB and after == fds,
     ("%d sessions without uprobes (half closed, all dropped): no fd leak (%d -> %d)"):format(NB, fds, after))
end

tap.done(true)
