-- Attempt: end the run with an error object whose __tostring loops forever (or returns a
-- huge string), hoping the runtime calls tostring on it after the script has finished -- when
-- no hook or watchdog is watching any more.
-- Why it must fail: the runtime describes error objects without calling metamethods (a table
-- without a string 'message' field is reported as such).
-- expect: error error object
-- flags: --max-runtime 5
error(setmetatable({}, { __tostring = function() while true do end end }))
