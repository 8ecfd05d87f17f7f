-- Attempt: hide the ".." in the middle of the path (sub/../../..), which a check of the first
-- component only would miss.
-- Why it must fail: every component is checked.
-- expect: error leaves the output folder
runara.write_file("sub/../../../../escape-marker-write-nested", "pwned")
print("ESCAPED: wrote outside the output folder with a nested ../")
