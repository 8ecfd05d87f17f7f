-- Attempt: read a file the script wrote, through a path relative to the script's folder that
-- walks into the working folder's results/ (granted with --allow-read {base}).
-- Why it must fail: whatever the spelling, a path that resolves into the run's output folder
-- is refused.
-- expect: error output folder
-- flags: --allow-read {base}
runara.write_file("mine.txt", "written by the script")
local dir = runara.out_dir()
local path = dir:sub(1, 1) == "/" and dir or ("../run/" .. dir)
local text = runara.read_file(path .. "/./mine.txt")
print("ESCAPED: the output folder was readable: " .. text)
