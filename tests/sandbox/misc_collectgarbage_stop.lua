-- Attempt: stop the garbage collector (collectgarbage("stop")) or tune it
-- ("setpause"/"setstepmul") so that garbage piles up beyond what the script holds, or make
-- finalizers run at chosen moments.
-- Why it must fail: scripts may only "collect", "count" and "step".
-- expect: error is not available to scripts
collectgarbage("stop")
print("ESCAPED: collectgarbage(\"stop\") worked")
