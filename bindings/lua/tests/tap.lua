-- tap.lua - the TAP helpers the Lua tests share (the binding's and the LuaJIT hook's):
-- local tap = require "tests.tap" (bindings/lua on LUA_PATH).
local M = { n = 0, failed = 0 }

function M.ok(cond, desc)
  M.n = M.n + 1
  if not cond then M.failed = M.failed + 1 end
  print(((cond and "ok ") or "not ok ") .. M.n .. " - " .. desc)
  io.stdout:flush()
  return cond
end

function M.skip(count, why)
  for _ = 1, count do
    M.n = M.n + 1
    print("ok " .. M.n .. " # SKIP " .. why)
  end
end

function M.diag(s) print("# " .. tostring(s):gsub("\n", "\n# ")) end

-- A new path in the test's own directory ($UEVENT_TEST_TMP, which t/lib.sh's lua_test
-- makes and removes however the script ends); without one, os.tmpname()'s (in /tmp,
-- left there if the script fails before it removes it).
local ntmp = 0
function M.tmpname()
  local dir = os.getenv("UEVENT_TEST_TMP")
  if not dir or dir == "" then return os.tmpname() end
  ntmp = ntmp + 1
  return ("%s/t%d"):format(dir, ntmp)
end

-- The plan, when it is known up front.
function M.plan(k) print("1.." .. k) end

-- Exit 0 when every test passed; with_plan: print the plan (the count run) first.
function M.done(with_plan)
  if with_plan then print("1.." .. M.n) end
  io.stdout:flush()
  os.exit(M.failed == 0 and 0 or 1)
end

return M
