-- runara.hidden_characters: bidi controls and zero-width characters as <U+XXXX> in the reports,
-- the same set as runara's terminal output (tests/unit/test_hidden_characters.cpp; that the two
-- agree on every BMP character: tests/end_to_end/test_hidden_characters_output.cpp). Through
-- report.md and report.html: test_report_hostile.lua.
local t = require("t")
local hidden = require("runara.hidden_characters")
local format = require("runara.report_format")

-- `cp` (below U+10000) in UTF-8.
local function utf8(cp)
  if cp < 0x80 then return string.char(cp) end
  if cp < 0x800 then return string.char(0xC0 + math.floor(cp / 0x40), 0x80 + cp % 0x40) end
  return string.char(0xE0 + math.floor(cp / 0x1000), 0x80 + math.floor(cp / 0x40) % 0x40, 0x80 + cp % 0x40)
end

local SET = { 0x061C, 0x200E, 0x200F, 0x202A, 0x202B, 0x202C, 0x202D, 0x202E, 0x2066, 0x2067, 0x2068, 0x2069,
              0x00AD, 0x200B, 0x200C, 0x200D, 0x2060, 0x2061, 0x2062, 0x2063, 0x2064, 0xFEFF }

t.test("each bidi control and zero-width character as <U+XXXX>", function()
  for _, cp in ipairs(SET) do
    local label = string.format("<U+%04X>", cp)
    t.eq(hidden.show("a" .. utf8(cp) .. "b"), "a" .. label .. "b", label)
    t.eq(format.controls(utf8(cp) .. utf8(cp)), label .. label, label .. " through controls()")
  end
  t.eq(format.esc("evil\226\128\174gpj.lua"), "evil&lt;U+202E&gt;gpj.lua", "report.html")
  t.eq(format.md_escape("evil\226\128\174gpj.lua"), "evil&lt;U+202E&gt;gpj.lua", "report.md")
end)

t.test("the characters next to the set, and ordinary non-ASCII text, stay as they are", function()
  for _, cp in ipairs({ 0x00AC, 0x00AE, 0x061B, 0x061D, 0x200A, 0x2010, 0x2028, 0x2029, 0x202F, 0x205F, 0x2065,
                        0x206A, 0xFEFC, 0xFF01 }) do
    t.eq(hidden.show("a" .. utf8(cp) .. "b"), "a" .. utf8(cp) .. "b", string.format("U+%04X", cp))
  end
  local ordinary = "caf\195\169 \230\151\165\230\156\172 \240\159\152\128 \215\169\215\156\215\149\215\157"
  t.eq(hidden.show(ordinary), ordinary, "café 日本 😀 and Hebrew letters")
end)

t.test("exactly the set is labelled among the BMP's characters", function()
  local n = 0
  for cp = 0xA0, 0xFFFF do
    if cp < 0xD800 or cp > 0xDFFF then
      local shown = hidden.show(utf8(cp))
      if shown ~= utf8(cp) then
        t.eq(shown, string.format("<U+%04X>", cp))
        n = n + 1
      end
    end
  end
  t.eq(n, #SET)
end)

t.test("bytes that are not UTF-8 around the set's characters: never split, never labelled", function()
  t.eq(hidden.show("x\226\128"), "x\226\128", "a cut U+202E")
  t.eq(hidden.show("x\226\226\128\174"), "x\226<U+202E>", "a stray lead byte before a whole one")
  t.eq(hidden.show("x\226\128\174\128"), "x<U+202E>\128", "a stray continuation byte after it")
  t.eq(hidden.show("\240\130\128\174"), "\240\130\128\174", "an overlong U+202E")
end)

t.done()
