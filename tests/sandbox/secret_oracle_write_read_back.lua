-- Attempt: the redaction oracle. Write every candidate value of a short secret to a file,
-- read the file back, and the candidate that came back masked is the secret.
-- Why it must fail: the output folder is write-only for scripts (runara.read_file refuses
-- it even when --allow-read covers it), so redacted data never comes back.
-- expect: error output folder
-- flags: --allow-read {base}/run --secret RUNARA_SANDBOX_SECRET_PIN
-- env: RUNARA_SANDBOX_SECRET_PIN=482913
local base = runara.params.base
local lines = {}
for pin = 482900, 482999 do lines[#lines + 1] = tostring(pin) end
runara.write_file("candidates.txt", table.concat(lines, "\n"))
local dir = runara.out_dir()
if dir:sub(1, 1) ~= "/" then dir = base .. "/run/" .. dir end
local back = runara.read_file(dir .. "/candidates.txt")
local i = 0
for line in back:gmatch("[^\n]+") do
  i = i + 1
  if line ~= lines[i] then print("ESCAPED: candidate number " .. i .. " came back masked") end
end
print("ESCAPED: the written file was readable")
