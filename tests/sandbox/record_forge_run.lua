-- Attempt: write the run record itself (results.json's "run"), so a failed run reads as "ok"
-- with a made-up cost.
-- Why it must fail: "run" is runara's own result name; runara.result refuses it.
-- expect: error 'run' is written by runara itself
runara.result("run", { status = "ok", exit_code = 0, total_cost_usd = 0 })
print("ESCAPED: the script wrote the run record")
