-- Attempt: plant a forged results.json by spelling its name as ".//./results.json".
-- Why it must fail: the path is normalised (empty and "." parts dropped) before the
-- reserved-name check.
-- expect: error is written by runara itself
runara.write_file(".//./results.json", '{"forged": true}')
print("ESCAPED: wrote results.json through .//./results.json")
