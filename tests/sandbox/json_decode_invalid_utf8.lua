-- Attempt: get bytes that are not UTF-8 into decoded strings (which end up in results.json and
-- reports): raw invalid bytes, overlong encodings, encoded surrogates, lone \u surrogates, and a
-- NUL byte that would end the parser's reading early and hide what follows.
-- Why it must fail: decode accepts only well-formed UTF-8 (RFC 8259) and refuses a NUL byte
-- outside a string; \u0000 inside a string is a NUL character in the Lua string, as it says.
-- expect: safe
for _, text in ipairs({ '"\255"', '"\192\175"', '"\237\160\128"', '"\\ud800"', '"\\udc00x"', '"\\ud800\\u0041"',
                        '{"a":1}\0{"b":2}', '["\128"]', '{"\254":1}' }) do
  local ok, v = pcall(runara.json.decode, text)
  if ok then print("ESCAPED: " .. text:gsub("%c", "?") .. " decoded to " .. tostring(v)) end
end
if runara.json.decode('"a\\u0000b"') ~= "a\0b" then print("ESCAPED: \\u0000 was not a NUL character") end
if runara.json.decode('"\\ud83d\\ude00"') ~= "\240\159\152\128" then print("ESCAPED: a surrogate pair was not decoded") end
-- And encode writes only UTF-8: a string of other bytes is refused, not written as it is.
if pcall(runara.json.encode, { name = "caf\233" }) then print("ESCAPED: Latin-1 bytes were encoded") end
print("SAFE")
