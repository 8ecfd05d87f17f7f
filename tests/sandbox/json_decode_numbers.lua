-- Attempt: smuggle values JSON does not have through runara.json.decode: numbers out of the
-- double's range (1e999, a 400-digit integer), NaN and Infinity, hexadecimal, leading zeros.
-- Why it must fail: decode follows RFC 8259: every one of these is an error naming the number,
-- never math.huge or a NaN that compares unequal to itself in a script's checks.
-- expect: safe
for _, text in ipairs({ "1e999", "-1e999", "[1e309]", "1" .. string.rep("0", 400), "NaN", "Infinity", "-Infinity",
                        "0x10", "01", "1.", ".5", "+1", "1e" }) do
  local ok, v = pcall(runara.json.decode, text)
  if ok then print("ESCAPED: " .. text:sub(1, 40) .. " decoded to " .. tostring(v)) end
  if not ok and not tostring(v):find("runara.json.decode: not valid JSON", 1, true) then
    print("ESCAPED: " .. text:sub(1, 40) .. " failed without saying why: " .. tostring(v))
  end
end
-- What is in range comes back exactly as the double it names.
if runara.json.decode("1.7976931348623157e308") ~= 1.7976931348623157e308 then print("ESCAPED: the largest double changed") end
if runara.json.decode("-0") ~= 0 or runara.json.decode("9007199254740993") ~= 9007199254740992 then
  print("ESCAPED: an integer beyond 2^53 is not its nearest double")
end
print("SAFE")
