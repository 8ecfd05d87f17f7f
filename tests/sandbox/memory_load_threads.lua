-- Attempt: four loads at once with 256 worker threads each: 519 threads and 1.87 GB of RSS.
-- Why it must fail: a run's loads share a cap of 256 worker threads, and each thread's buffers
-- are reserved from the memory budget; both refusals are clear errors at the call.
-- expect: safe
-- flags: --max-memory 32M
local s = http_load.fake_server{ static_body = "ok" }
local t = {}
for i = 1, 4 do
  t[i] = runara.spawn(function()
    return http_load.run{ url = s.url, concurrency = 256, threads = 256, duration = 2, name = "l" .. i }
  end)
end
local refused = 0
for i = 1, 4 do
  local ok, err = pcall(t[i].join, t[i])
  if ok then print("ESCAPED: load " .. i .. " ran 256 threads") end
  if tostring(err):find("worker thread", 1, true) then refused = refused + 1 end
end
if refused == 4 then print("SAFE") end
