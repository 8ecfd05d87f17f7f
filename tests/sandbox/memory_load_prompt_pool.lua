-- Attempt: ask http_load for a synthetic prompt pool far larger than the memory cap
-- (100,000 prompts of 100,000 tokens, ~60 GB). The pool is built by C++ off the Lua heap, so
-- the Lua cap alone never saw it: 0.86 GB of RSS, then std::bad_alloc and SIGABRT.
-- Why it must fail: the pool is checked against the run's memory budget (--max-memory) before
-- a prompt is made, and refused with an error that names it.
-- expect: error synthetic prompt pool (100000 prompts of up to 100000 tokens) needs about
-- flags: --max-memory 32M
local s = http_load.fake_server{}
http_load.run{ url = s.url, model = s.model, prompts = { input_tokens = 100000, count = 100000 }, requests = 1 }
print("ESCAPED")
