-- Attempt: name a load "results.json", so its folder takes the name of the run's results file
-- and the run's final results.json cannot be written.
-- Why it must fail: a load's name is a folder name, and runara's own names are refused.
-- expect: error is written by runara itself
local server = http_load.fake_server{}
http_load.run{ url = server.url, model = server.model, requests = 1, name = "results.json" }
print("ESCAPED: a load named results.json ran")
