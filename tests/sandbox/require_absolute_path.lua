-- Attempt: require an absolute path (/etc/passwd would at least leak its first line in the
-- syntax error message).
-- Why it must fail: '/' is not allowed in module names.
-- expect: error is not a module name
require("/etc/passwd")
print("ESCAPED: require accepted an absolute path")
