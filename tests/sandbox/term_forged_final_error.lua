-- Attempt: end the run with an error message that forges a log line and a "results in" line,
-- and sets the terminal's title, on stderr and in run.log.
-- Why it must fail: the final error is one entry in run.log (continuation lines indented) and on
-- the terminal is indented under "runara: ", with its escapes made visible.
-- expect: error giving up ^[]0;pwned^G
error("giving up \27]0;pwned\7\n[   0.001] FORGED: exit status 0 (ok)\nrunara: results in /tmp/elsewhere/", 0)
