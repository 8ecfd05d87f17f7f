-- runara.hidden_characters: the Unicode characters that show nothing themselves yet change how
-- the text around them reads, written as <U+202E> in report.md and report.html (through
-- report_format's controls()), as runara's terminal output and run.log write them. The set is
-- runtime/base/hidden_characters.cpp's, where each is justified: the twelve bidi controls of a
-- "Trojan Source" name (U+061C, U+200E, U+200F, U+202A-U+202E, U+2066-U+2069) and the invisible
-- formatting characters (U+00AD, U+200B-U+200D, U+2060-U+2064, U+FEFF).
-- tests/end_to_end/test_hidden_characters_output.cpp runs both over every character of the BMP
-- and checks that they agree.

-- { first, last } code points, as in hidden_characters.cpp.
local RANGES = {
  { 0x00AD, 0x00AD }, { 0x061C, 0x061C }, { 0x200B, 0x200F }, { 0x202A, 0x202E },
  { 0x2060, 0x2064 }, { 0x2066, 0x2069 }, { 0xFEFF, 0xFEFF },
}

-- A code point below U+10000 in UTF-8 (all of the set is: two or three bytes).
local function utf8(cp)
  if cp < 0x800 then return string.char(0xC0 + math.floor(cp / 0x40), 0x80 + cp % 0x40) end
  return string.char(0xE0 + math.floor(cp / 0x1000), 0x80 + math.floor(cp / 0x40) % 0x40, 0x80 + cp % 0x40)
end

-- Each one's bytes → its label. A byte sequence matched whole: UTF-8's lead bytes never occur
-- inside another character, so a match is that character, whatever bytes (valid or not) are
-- around it, and nothing is ever split.
local LABEL = {}
for _, r in ipairs(RANGES) do
  for cp = r[1], r[2] do LABEL[utf8(cp)] = string.format("<U+%04X>", cp) end
end

-- `text` with each of them written as <U+XXXX>; every other byte as it is.
local function show(text)
  return (text:gsub("[\194-\223][\128-\191]", LABEL):gsub("[\224-\239][\128-\191][\128-\191]", LABEL))
end

return { show = show }
