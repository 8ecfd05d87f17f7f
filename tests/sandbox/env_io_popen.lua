-- Attempt: run a shell command with io.popen (the classic one-line escape) and create a marker
-- file next to the script's folder.
-- Why it must fail: the io library is never opened in the sandbox.
-- expect: error attempt to index global 'io'
local p = io.popen("touch ../escape-marker-io-popen && echo pwned")
print("ESCAPED: io.popen ran a shell command: " .. tostring(p and p:read("*a")))
