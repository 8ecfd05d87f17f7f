-- Attempt: a ReDoS pattern through string.gmatch's iterator (a different entry point into the
-- matcher than find/match/gsub).
-- Why it must fail: gmatch's iterator is guarded too.
-- (Needs runtime/script/patterns.cpp; without it this run outlives its time bound.)
-- expect: watchdog
-- flags: --max-runtime 1
local subject = ("a"):rep(1e5)
for m in subject:gmatch(("a-"):rep(30) .. "b") do
  print("ESCAPED: matched " .. #m)
end
print("ESCAPED: the ReDoS gmatch loop ended")
