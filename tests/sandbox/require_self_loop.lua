-- Attempt: a module that requires itself (the harness writes selfreq.lua), to recurse without
-- end through require's C frames or to observe a half-loaded module.
-- Why it must fail: require marks a module as loading and reports the loop.
-- expect: error requires itself
require("selfreq")
print("ESCAPED: a self-requiring module loaded")
