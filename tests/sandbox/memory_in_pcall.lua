-- Attempt: grow a table until the allocator fails, catch "not enough memory" with pcall, drop
-- the table and carry on as if nothing happened (then do it again).
-- Why it must fail: hitting the cap stops the run; pcall cannot swallow it.
-- expect: memory
-- flags: --max-memory 16M
for round = 1, 1000 do
  pcall(function()
    local t = {}
    for i = 1, 1e9 do t[i] = { i } end
  end)
  collectgarbage()
end
print("ESCAPED: survived repeated out-of-memory errors")
