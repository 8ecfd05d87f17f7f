-- runara.report_format: what the report modules share: numbers as text (and finite(), num() for
-- figures that may be NaN or infinite), escaping for HTML and for Markdown, and the machine column
-- of a comparison's tables.

local function finite(v) return type(v) == "number" and v == v and v ~= math.huge and v ~= -math.huge end

-- A figure as text: whole from 100 up (or with digits = 0), else `digits` decimals (default 1).
local function f(v, digits)
  if not finite(v) then return "not measured" end
  if math.abs(v) >= 100 or digits == 0 then return string.format("%.0f", v) end
  return string.format("%." .. (digits or 1) .. "f", v)
end

-- A value, or "—" when missing (in tables where the row exists because something else was measured).
local function fv(v, digits) return finite(v) and f(v, digits) or "—" end

local function gb(bytes) return finite(bytes) and string.format("%.1f GB", bytes / 1e9) or "—" end

local function esc(text)
  return (tostring(text):gsub("[&<>\"']", { ["&"] = "&amp;", ["<"] = "&lt;", [">"] = "&gt;", ['"'] = "&quot;", ["'"] = "&#39;" }))
end

-- Text from a script or a machine, made inert in Markdown: no line breaks (table cells), and
-- every character that could start a link, an image, HTML, a code span or a cell is escaped
-- (`[x](javascript:…)` stays text; so does `![x](http://…)`, `<img …>` and `&lt;`).
local MD = { ["\\"] = "\\\\", ["`"] = "\\`", ["["] = "\\[", ["]"] = "\\]", ["|"] = "\\|", ["<"] = "&lt;", [">"] = "&gt;", ["&"] = "&amp;" }
local function cell(text)
  return (tostring(text):gsub("[\r\n]+", " "):gsub("[\\`%[%]|<>&]", MD))
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
  f = f,
  fv = fv,
  gb = gb,
  esc = esc,
  md_escape = cell,
  multi = multi,
  with_machine_column = with_machine_column,
}
