-- Attempt: a threshold table with a 1 MB name and a non-string key, to make the "did you mean"
-- search quadratic in the name's length (a CPU bomb outside the count hook's reach) or to crash
-- the checker.
-- Why it must fail: names longer than 64 characters are not compared, and every key is checked
-- before the load starts: a clear error, at once.
-- expect: error unknown threshold
-- flags: --max-runtime 10
local server = http_load.fake_server{}
local ok, err = pcall(http_load.run, { url = server.url, model = server.model, requests = 1, quiet = true,
  thresholds = { [1] = 5 } })
assert(not ok and tostring(err):find("takes names such as ttft_p99_ms as keys"), tostring(err))
http_load.run{ url = server.url, model = server.model, requests = 1, quiet = true,
  thresholds = { [string.rep("ttft_p99_ms", 100000)] = 5 } }
print("ESCAPED: an unknown threshold name was accepted")
