-- Attempt: hang the run in C++ with a shipped tokenizer.json whose pre-tokenizer regex
-- backtracks exponentially ((\w+\s?)+\d on prompts without digits): building the prompt pool
-- would take longer than the universe, out of the watchdog's and the memory cap's sight.
-- Why it must fail: every regex match is bounded (PCRE2's match limit) and the refusal is an
-- error naming the tokenizer; the run ends at once as a normal script error.
-- expect: error backtracking_tokenizer.json: the pre-tokenizer's regex gave up (match limit)
local s = http_load.fake_server{}
http_load.run{ url = s.url, model = s.model, requests = 1,
               prompts = { input_tokens = 64, count = 2, tokenizer = "backtracking_tokenizer.json" } }
print("ESCAPED: the backtracking tokenizer was accepted")
