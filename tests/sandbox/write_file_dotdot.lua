-- Attempt: write a file outside the run's output folder with ../ components (a marker file
-- in the harness's temporary folder).
-- Why it must fail: runara.write_file takes relative paths without "..".
-- expect: error leaves the output folder
runara.write_file("../../../escape-marker-write-dotdot", "pwned")
print("ESCAPED: wrote outside the output folder with ../")
