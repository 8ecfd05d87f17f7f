-- runara.report_format: what the report modules share: numbers as text (and finite(), num() for
-- figures that may be NaN or infinite), escaping for HTML and for Markdown, and the machine column
-- of a comparison's tables.

local hidden_characters = require("runara.hidden_characters")

local function finite(v) return type(v) == "number" and v == v and v ~= math.huge and v ~= -math.huge end

-- Beyond ±1e15 a figure is no measurement (report_svg.lua leaves such points out of its charts);
-- in text it is still shown, in exponent form: a fixed-point 1e300 runs to 301 digits, and "%d"
-- of it wraps to -9223372036854775808.
local BIG = 1e15

-- A finite number with `spec` ("%.2f", "%d"), from ±1e15 on as "%.4g" (1e+300); "not measured"
-- for NaN and ±inf. Every number the reports write as text goes through it (or through f below).
local function fixed(spec, v)
  if not finite(v) then return "not measured" end
  if math.abs(v) >= BIG then return string.format("%.4g", v) end
  return string.format(spec, v)
end

-- A figure as text: whole from 100 up (or with digits = 0), else `digits` decimals (default 1).
local function f(v, digits)
  if not finite(v) then return "not measured" end
  if math.abs(v) >= 100 or digits == 0 then return fixed("%.0f", v) end
  return string.format("%." .. (digits or 1) .. "f", v)
end

-- A value, or "—" when missing (in tables where the row exists because something else was measured).
local function fv(v, digits) return finite(v) and f(v, digits) or "—" end

-- Memory as the reports show it: GiB (2^30 bytes), labelled so (docs/report.md#units).
local GIB = 2 ^ 30
local function gib(bytes) return finite(bytes) and finite(bytes / GIB) and (fixed("%.1f", bytes / GIB) .. " GiB") or "—" end

-- A metadata value (a script's, a machine's) as text; nil when missing (nil, false, ""), or a
-- number that is NaN or infinite (which would print as nan or inf).
local function given(v)
  if v == nil or v == false or v == "" or (type(v) == "number" and not finite(v)) then return nil end
  return tostring(v)
end

-- Control characters as `cat -v` shows them (ESC as ^[, CR as ^M, U+009B as M-^[; tab and line
-- feed stay), as runara's terminal output does: a report shown with cat or less cannot drive the
-- terminal, and none reaches the page (HTML forbids them). Bidi controls and zero-width
-- characters as <U+202E> (runara.hidden_characters), so a name cannot read as another.
local function controls(text)
  return hidden_characters.show((text:gsub("[%z\1-\8\11-\31\127]", function(c)
    return c == "\127" and "^?" or "^" .. string.char(c:byte() + 64)
  end):gsub("\194([\128-\159])", function(c) return "M-^" .. string.char(c:byte() - 128 + 64) end)))
end

local HTML = { ["&"] = "&amp;", ["<"] = "&lt;", [">"] = "&gt;", ['"'] = "&quot;", ["'"] = "&#39;" }
-- Text as HTML (element content or an attribute value in double quotes): inert.
local function esc(text)
  return (controls(tostring(text)):gsub("[&<>\"']", HTML))
end

-- Text from a script or a machine, made inert in Markdown: no line breaks (table cells), and
-- every character that could start a link, an image, HTML, a code span or a cell is escaped
-- (`[x](javascript:…)` stays text; so does `![x](http://…)`, `<img …>` and `&lt;`). Without an
-- unescaped `[` no link or image can form, whatever `!`, `(` and `)` follow; `*` and `_` are left
-- as they are (emphasis at worst, and names such as concurrent_32 stay as they read). Every string
-- report.md takes from a script, a machine or a server goes through here (or `line` below); only
-- the error, in a fenced code block, is shown verbatim.
local MD = { ["\\"] = "\\\\", ["`"] = "\\`", ["["] = "\\[", ["]"] = "\\]", ["|"] = "\\|", ["<"] = "&lt;", [">"] = "&gt;", ["&"] = "&amp;" }
local function cell(text)
  return (controls((tostring(text):gsub("[\r\n]+", " "))):gsub("[\\`%[%]|<>&]", MD))
end

-- The same for text that starts a line of report.md (a paragraph of its own): nor can it begin a
-- heading, a list, a thematic break, a code fence (`~~~` would swallow the rest of the report) or
-- an indented code block.
local function line(text)
  local s = cell(text):gsub("^%s+", "")
  if s:match("^[#%-%+%*=_~]") then return "\\" .. s end
  local digits, rest = s:match("^(%d+)([%.%)].*)$")
  if digits then return digits .. "\\" .. rest end
  return s
end

-- Whether the view compares several machines (then tables have a machine column).
local function multi(v) return v.machines and #v.machines > 0 end

-- A table's columns, led by "machine" when the view has several.
local function with_machine_column(v, columns)
  if not multi(v) then return columns end
  local out = { "machine" }
  for _, c in ipairs(columns) do out[#out + 1] = c end
  return out
end

-- A finite number as is; nil for NaN, ±inf and non-numbers (what results.json may hold).
local function num(v) return finite(v) and v or nil end

return {
  finite = finite,
  num = num,
  fixed = fixed,
  given = given,
  f = f,
  fv = fv,
  gib = gib,
  GIB = GIB,
  esc = esc,
  controls = controls,
  md_escape = cell,
  md_line = line,
  multi = multi,
  with_machine_column = with_machine_column,
}
