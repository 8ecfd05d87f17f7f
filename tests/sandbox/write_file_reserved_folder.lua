-- Attempt: create a folder named run.log (or results.json) in the output folder, so runara can
-- no longer write its own log or results there and the run ends without a record.
-- Why it must fail: a path whose first component is a name runara writes itself is refused.
-- expect: error is written by runara itself
runara.write_file("run.log/x", "blocks the log\n")
print("ESCAPED: made a folder named run.log")
