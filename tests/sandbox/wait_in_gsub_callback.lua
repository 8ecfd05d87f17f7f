-- Attempt: call runara.sleep inside a string.gsub callback, a C-call boundary the coroutine
-- cannot yield across. runara.sleep registers its wait (and starts its timer) before trying
-- to yield; the yield fails ("attempt to yield across C-call boundary"), pcall catches it, but
-- the stale wait stays registered: it later wakes the task in the middle of an unrelated wait
-- (the next runara.sleep returns at once) and, once the run has ended, fires into a
-- destroyed scheduler (SIGSEGV).
-- Why it must fail: a wait that cannot yield must be refused before anything is registered,
-- with a catchable error; later waits must last their full time.
-- expect: safe
local ok = pcall(string.gsub, "a", "a", function() runara.sleep(0.2) end)
if ok then print("note: runara.sleep worked inside a gsub callback") end
local started = runara.now()
runara.sleep(0.4)
local slept = runara.now() - started
if slept < 0.35 then
  print(("ESCAPED: a stale wait woke the task early (slept %.3f s of 0.4 s)"):format(slept))
end
print("SAFE")
