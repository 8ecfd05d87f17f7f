-- Attempt: run a shell command with os.execute, creating a marker file.
-- Why it must fail: scripts get only os.time, os.clock, os.date and a checked os.getenv.
-- expect: error attempt to call field 'execute'
local status = os.execute("touch ../escape-marker-os-execute")
print("ESCAPED: os.execute ran a shell command, status " .. tostring(status))
