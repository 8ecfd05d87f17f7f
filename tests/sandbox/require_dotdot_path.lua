-- Attempt: require a file outside the script's folder with a path instead of a module name
-- ("../outside/evil" -- the test harness puts an evil.lua that prints the ESCAPED marker
-- next to the script's folder).
-- Why it must fail: require takes dotted module names only (letters, digits, '_', '-', '.').
-- expect: error is not a module name
require("../outside/evil")
print("ESCAPED: require loaded a module through a ../ path")
