-- Attempt: write to an absolute path (a marker in /tmp; the harness checks it never appears).
-- Why it must fail: absolute paths are refused; files go only into the output folder.
-- expect: error is absolute
runara.write_file("/tmp/runara-sandbox-escape-marker", "pwned")
print("ESCAPED: wrote to an absolute path")
