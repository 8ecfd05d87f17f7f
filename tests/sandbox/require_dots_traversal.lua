-- Attempt: use the dots-to-slashes mapping itself to climb out: "..outside.evil" would become
-- "//outside/evil.lua" and "a..b" "a//b"; ".outside" a hidden path.
-- Why it must fail: module names may not start or end with a dot or contain two in a row.
-- expect: error is not a module name
require("..outside.evil")
print("ESCAPED: require accepted a name starting with dots")
