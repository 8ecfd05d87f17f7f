-- t: the stdlib's Lua test harness. Each tests/lua/test_*.lua file is one ctest test, run as
--   build/runara --out <tmp> tests/lua/test_NAME.lua
-- in the same sandbox scripts get, so what passes here passes for a user's script.
--
--   local t = require("t")
--   t.test("report: a failed run says PARTIAL", function()
--     t.eq(rep.error, "boom")
--     t.match(md, "PARTIAL")
--     t.raises(function() suite.run(nil) end, "suite.run: argument 'server'", "test_suite.lua:%d+:")
--   end)
--   t.done()   -- prints "N passed, N failed" and fails the run when one failed
local M = {}
local passed, failed = 0, 0

local function describe(v)
  if type(v) == "string" then return string.format("%q", v) end
  return tostring(v)
end

-- Raised by the assertions below: the test's own line (level 3: the caller of t.eq & co.).
local function fail(msg, level) error(msg, (level or 2) + 1) end

function M.eq(got, want, what)
  if got ~= want then fail((what and what .. ": " or "") .. "expected " .. describe(want) .. ", got " .. describe(got), 2) end
end

function M.near(got, want, tol, what)
  if type(got) ~= "number" or math.abs(got - want) > tol then
    fail((what and what .. ": " or "") .. "expected " .. describe(want) .. " ± " .. tol .. ", got " .. describe(got), 2)
  end
end

function M.truthy(v, what) if not v then fail((what or "value") .. " is " .. describe(v), 2) end end

function M.match(text, pattern, what)
  if type(text) ~= "string" or not text:find(pattern) then
    fail((what and what .. ": " or "") .. "no match for " .. describe(pattern) .. " in " ..
         describe(type(text) == "string" and text:sub(1, 400) or text), 2)
  end
end

function M.no_match(text, pattern, what)
  if type(text) == "string" and text:find(pattern) then
    fail((what and what .. ": " or "") .. "unexpected match for " .. describe(pattern), 2)
  end
end

-- fn must raise; its message must contain `plain` (a plain substring) and, when given, match
-- `where` (a pattern, e.g. the test file's own "test_x.lua:%d+:" to check the error's level).
function M.raises(fn, plain, where)
  local ok, err = pcall(fn)
  if ok then fail("expected an error containing " .. describe(plain) .. ", got none", 2) end
  err = tostring(err)
  if plain and not err:find(plain, 1, true) then fail("expected an error containing " .. describe(plain) .. ", got " .. describe(err), 2) end
  if where and not err:find(where) then fail("error " .. describe(err) .. " does not point at " .. describe(where), 2) end
  return err
end

-- Runs fn and fails when it took longer than `limit` seconds of CPU; returns what fn returns.
function M.quick(limit, fn)
  local t0 = os.clock()
  local out = fn()
  M.truthy(os.clock() - t0 < limit, string.format("took %.2f s of CPU (limit %g)", os.clock() - t0, limit))
  return out
end

function M.test(name, fn)
  local ok, err = pcall(fn)
  if ok then
    passed = passed + 1
  else
    failed = failed + 1
    print("FAIL " .. name .. "\n  " .. tostring(err))
  end
end

function M.done()
  print(string.format("%d passed, %d failed", passed, failed))
  if failed > 0 then error(failed .. " Lua test(s) failed", 0) end
end

return M
