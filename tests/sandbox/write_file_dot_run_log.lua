-- Attempt: overwrite the run's own log by spelling its name with a leading "./", past a
-- reserved-name check that compared the raw text.
-- Why it must fail: the path is normalised ("./run.log" -> "run.log") before the check.
-- expect: error is written by runara itself
runara.log("a line runara wrote")
runara.write_file("./run.log", "forged log\n")
print("ESCAPED: replaced run.log through ./run.log")
