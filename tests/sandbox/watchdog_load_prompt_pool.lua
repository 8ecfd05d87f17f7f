-- Attempt: outlive the hard deadline inside http_load's preparation. A synthetic pool of 200
-- prompts of 200,000 tokens fits the default memory cap but takes seconds to build on a worker
-- of libuv's thread pool, which the watchdog cannot interrupt: the run ended 10 s after a 1 s
-- limit, waiting for it.
-- Why it must fail: building the pool (and its request bodies) checks the run's stop flag
-- between prompts, so the deadline holds within its grace.
-- expect: watchdog
-- flags: --max-runtime 1
local s = http_load.fake_server{}
http_load.run{ url = s.url, model = s.model, prompts = { input_tokens = 200000, count = 200 }, duration = 30 }
print("ESCAPED")
