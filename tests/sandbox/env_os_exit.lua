-- Attempt: end the whole host process with os.exit(0) so that the run "succeeds" without
-- finishing, skipping teardown and the result files.
-- Why it must fail: os.exit is not part of the sandboxed os table.
-- expect: error attempt to call field 'exit'
os.exit(0)
print("ESCAPED: os.exit returned")
