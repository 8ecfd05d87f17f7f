-- Attempt: an 8 MiB header in a 20-point sweep. Each point, each worker and each request kept
-- its own copy of the headers, off the Lua heap: 1.05 GB of RSS under a 16 MiB cap.
-- Why it must fail: headers are bounded (64 KiB in all, far above what servers accept) and
-- refused before anything is copied.
-- expect: error make 8388617 bytes of headers; at most 65536 are allowed
-- flags: --max-memory 32M
local s = http_load.fake_server{}
local h = string.rep("x", 8 * 1024 * 1024)
http_load.run{ url = s.url, headers = { ["X-Big"] = h }, concurrency = {1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20}, requests = 1 }
print("ESCAPED")
