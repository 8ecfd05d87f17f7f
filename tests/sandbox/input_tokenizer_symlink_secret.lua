-- Attempt: read a file outside the script's folder by naming it as the prompts' tokenizer
-- (link_secret.txt -> ../outside/secret.txt); its parse error would quote the start of it.
-- Why it must fail: prompts.tokenizer is checked like every file a script reads (the resolved
-- path, against the script's folder and --allow-read) before anything is opened.
-- expect: error is not allowed
local s = http_load.fake_server{}
http_load.run{ url = s.url, model = s.model, requests = 1, prompts = { tokenizer = "link_secret.txt" } }
print("ESCAPED: a tokenizer outside the script's folder was read")
