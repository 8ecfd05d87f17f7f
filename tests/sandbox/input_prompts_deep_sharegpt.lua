-- Attempt: crash the runtime with a ShareGPT prompts file nested 100,000 levels deep (the
-- prompt pool's error excerpt dump()ed it recursively: SIGSEGV, no teardown, no results).
-- Why it must fail: every JSON parse of a file, a server's or a client's data is depth-limited
-- (64 levels) and refused with a clear error; the run ends as a normal script error.
-- expect: error nested deeper than 64 levels
-- The file ships with the script (the harness puts deep_sharegpt.json in the script's folder):
-- scripts cannot read back what they write to their output folder.
local server = http_load.fake_server{}
http_load.run{ url = server.url, model = server.model, requests = 1,
               prompts = { file = "deep_sharegpt.json", format = "sharegpt" } }
print("ESCAPED: a 100,000-level prompts file was accepted")
