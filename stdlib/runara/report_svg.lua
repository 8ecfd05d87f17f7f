-- Line charts as inline SVG, for report.html: no script, no font or file from the network.
-- chart{ title, x_label, y_label, xlog, note, series = { {name =, points = {{x, y}, ...}, color =,
--        dash =, dots =, few = {[i] = samples}}, ... }, marks = { {x =, label =}, ... } } -> "<svg ...>...</svg>"
-- Each series is <g class="series" data-series="NAME"> with one <circle data-x data-y> per point
-- (a point in `few` rests on too few samples: class "few", drawn hollow, data-samples), so a
-- test (or a reader's tools) can find the numbers again. Whatever the numbers (NaN, inf,
-- -1e300, a million points), a chart is drawn in bounded time: points not finite or beyond ±1e15 are left out
-- and counted in a note, every loop over ticks is capped, long series are thinned.
local M = {}

local W, H = 760, 340
local L, R, B = 70, 20, 52
local COLORS = { "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf" }
M.COLORS = COLORS
local LIMIT = 1e15        -- beyond this a value is not a measurement
local MAX_POINTS = 2000   -- per series; longer ones keep each bucket's lowest and highest point
local MAX_TICKS = 12

local report_format = require("runara.report_format")
-- Text as HTML/SVG, inert (report_format's: control characters shown as cat -v does, too).
M.escape = report_format.esc
local esc = M.escape

local finite = report_format.finite
local function usable(v) return finite(v) and v >= -LIMIT and v <= LIMIT end

-- Round-number ticks from the last at or below lo to the first at or above hi; at most MAX_TICKS + 1.
local function ticks(lo, hi, n)
  if not (usable(lo) and usable(hi)) then return { 0, 1 } end
  if hi - lo < math.max(math.abs(lo), math.abs(hi), 1) * 1e-9 then hi = lo + math.max(math.abs(lo) * 0.1, 1) end
  local raw = (hi - lo) / (n or 5)
  local mag = 10 ^ math.floor(math.log10(raw))
  local step = mag * 10
  for _, m in ipairs({ 1, 2, 2.5, 5, 10 }) do
    if raw <= m * mag then step = m * mag break end
  end
  local out, v = {}, math.floor(lo / step + 1e-9) * step
  for _ = 1, MAX_TICKS + 1 do
    out[#out + 1] = v
    if v >= hi - step * 1e-9 then break end
    v = v + step
  end
  if out[#out] < hi then out[#out + 1] = hi end  -- (only when capped) the top still fits every point
  return out
end

local function label(v)
  if math.abs(v) >= 1e6 then return string.format("%.3gM", v / 1e6) end
  if math.abs(v) >= 1e4 then return string.format("%.3gk", v / 1e3) end
  if v == math.floor(v) then return string.format("%d", v) end
  return string.format("%.3g", v)
end

-- A long series thinned to about MAX_POINTS points: per bucket its lowest and highest point, in order.
local function thin(points)
  if #points <= MAX_POINTS then return points end
  local per = math.ceil(#points / (MAX_POINTS / 2))
  local out = {}
  for first = 1, #points, per do
    local lo, hi
    for i = first, math.min(first + per - 1, #points) do
      if not lo or points[i][2] < points[lo][2] then lo = i end
      if not hi or points[i][2] > points[hi][2] then hi = i end
    end
    if lo == hi then out[#out + 1] = points[lo]
    elseif lo < hi then out[#out + 1] = points[lo] out[#out + 1] = points[hi]
    else out[#out + 1] = points[hi] out[#out + 1] = points[lo] end
  end
  return out
end

-- Legend entries laid out in rows under the title; returns the entries' positions and the plot's top.
local function legend_layout(series)
  local pos, x, y = {}, L, 30
  for i, s in ipairs(series) do
    local w = 28 + 7 * math.min(#tostring(s.name), 40)
    if x > L and x + w > W - R then x, y = L, y + 16 end
    pos[i] = { x = x, y = y }
    x = x + w
  end
  return pos, y + 22
end

function M.chart(c)
  local series = {}
  local pts, dropped, xs = 0, 0, {}
  local x0, x1, ymin, y1 = math.huge, -math.huge, 0, -math.huge
  for _, s in ipairs(c.series or {}) do
    local kept = {}
    for i, p in ipairs(s.points or {}) do
      if type(p) == "table" and type(p[1]) == "number" and type(p[2]) == "number" then
        if not (usable(p[1]) and usable(p[2])) then
          dropped = dropped + 1
        elseif not c.xlog or p[1] > 0 then
          kept[#kept + 1] = { p[1], p[2], few = s.few and s.few[i] }
        end
      end
    end
    kept = thin(kept)
    for _, p in ipairs(kept) do
      pts = pts + 1
      if c.xlog then xs[#xs + 1] = p[1] end
      x0, x1 = math.min(x0, p[1]), math.max(x1, p[1])
      ymin, y1 = math.min(ymin, p[2]), math.max(y1, p[2])
    end
    series[#series + 1] = { name = tostring(s.name), points = kept, color = s.color, dash = s.dash, dots = s.dots }
  end
  local out = { string.format('<svg xmlns="http://www.w3.org/2000/svg" class="chart" viewBox="0 0 %d %d" role="img" aria-label="%s">', W, H, esc(c.title or "")) }
  out[#out + 1] = string.format('<text x="%d" y="20" class="title">%s</text>', L, esc(c.title or ""))
  if pts == 0 then
    out[#out + 1] = string.format('<text x="%d" y="%d" class="empty">%s</text></svg>', W / 2 - 40, H / 2,
      dropped > 0 and string.format("%d point(s) out of range, none to draw", dropped) or "no data")
    return table.concat(out, "\n")
  end
  local legend, T = legend_layout(series)
  local y0 = ymin
  local fx
  if c.xlog then
    local a, b = math.log(x0), math.log(math.max(x1, x0 * 2))
    fx = function(x) return L + (math.log(x) - a) / (b - a) * (W - L - R) end
  else
    local xt = ticks(x0, x1)
    local lo, hi = x0, x1
    if hi <= lo then hi = xt[#xt] end
    if hi <= lo then hi = lo + 1 end
    fx = function(x) return L + (x - lo) / (hi - lo) * (W - L - R) end
  end
  local yt = ticks(y0, y1)
  local ybot, ytop = yt[1], yt[#yt]
  if ytop <= ybot then ytop = ybot + 1 end
  local fy = function(y) return H - B - (y - ybot) / (ytop - ybot) * (H - T - B) end
  -- grid and axes
  for _, v in ipairs(yt) do
    out[#out + 1] = string.format('<line class="grid" x1="%d" x2="%d" y1="%.1f" y2="%.1f"/><text class="tick" x="%d" y="%.1f" text-anchor="end">%s</text>',
      L, W - R, fy(v), fy(v), L - 6, fy(v) + 4, label(v))
  end
  local xt = {}
  if c.xlog then
    local seen, all = {}, {}
    for _, x in ipairs(xs) do if not seen[x] then seen[x] = true all[#all + 1] = x end end
    table.sort(all)
    local every = math.ceil(#all / MAX_TICKS)
    for i = 1, #all, every do xt[#xt + 1] = all[i] end
  else
    for _, v in ipairs(ticks(x0, x1)) do if v >= x0 - 1e-9 * math.abs(x0) and v <= x1 + 1e-9 * math.abs(x1) then xt[#xt + 1] = v end end
  end
  for _, v in ipairs(xt) do
    out[#out + 1] = string.format('<text class="tick" x="%.1f" y="%d" text-anchor="middle">%s</text>', fx(v), H - B + 18, label(v))
  end
  out[#out + 1] = string.format('<line class="axis" x1="%d" x2="%d" y1="%d" y2="%d"/>', L, W - R, H - B, H - B)
  out[#out + 1] = string.format('<line class="axis" x1="%d" x2="%d" y1="%d" y2="%d"/>', L, L, T, H - B)
  out[#out + 1] = string.format('<text class="axis-label" x="%d" y="%d" text-anchor="middle">%s</text>', (L + W - R) / 2, H - 12, esc(c.x_label or ""))
  out[#out + 1] = string.format('<text class="axis-label" transform="translate(16 %d) rotate(-90)" text-anchor="middle">%s</text>', (T + H - B) / 2, esc(c.y_label or ""))
  -- phase marks (at most 40); of marks closer than 12 px the last one stands (its label would
  -- cover the others': a script's phase and the load that starts right after it)
  local shown = {}
  for _, m in ipairs(c.marks or {}) do
    if usable(m.x) and m.x >= x0 and m.x <= x1 then
      local x = fx(m.x)
      if #shown > 0 and math.abs(x - shown[#shown].x) < 12 then shown[#shown] = { x = x, label = m.label }
      elseif #shown < 40 then shown[#shown + 1] = { x = x, label = m.label } end
    end
  end
  for _, m in ipairs(shown) do
    -- The label sits left of its line (rotated, its glyphs extend towards -x), except at the
    -- y axis, where it would be drawn over the axis and its numbers: there it goes right.
    local lx = m.x - L < 14 and m.x + 12 or m.x - 3
    out[#out + 1] = string.format('<g class="mark" data-label="%s"><line x1="%.1f" x2="%.1f" y1="%d" y2="%d"/><text x="%.1f" y="%d" transform="rotate(-90 %.1f %d)">%s</text></g>',
      esc(m.label), m.x, m.x, T, H - B, lx, H - B - 4, lx, H - B - 4, esc(m.label))
  end
  -- series, with the legend in rows under the title
  for i, s in ipairs(series) do
    local color = s.color or COLORS[(i - 1) % #COLORS + 1]
    local path, dots = {}, {}
    for _, p in ipairs(s.points) do
      local px, py = fx(p[1]), fy(p[2])
      path[#path + 1] = string.format("%.1f,%.1f", px, py)
      local few = p.few and string.format(' class="few" fill="#fff" stroke-width="1.5" data-samples="%s"', esc(p.few)) or ""
      dots[#dots + 1] = string.format('<circle cx="%.1f" cy="%.1f" r="%s" data-x="%s" data-y="%s"%s><title>%s: %s, %s%s</title></circle>',
        px, py, s.dots == false and "0.8" or "3", label(p[1]), string.format("%.4g", p[2]), few, esc(s.name), label(p[1]),
        string.format("%.4g", p[2]), p.few and (" (" .. esc(p.few) .. " samples)") or "")
    end
    out[#out + 1] = string.format('<g class="series" data-series="%s" stroke="%s" fill="%s">', esc(s.name), color, color)
    if #path > 1 then
      out[#out + 1] = '<polyline fill="none" stroke-width="2"' .. (s.dash and ' stroke-dasharray="6 4"' or "") ..
                      ' points="' .. table.concat(path, " ") .. '"/>'
    end
    out[#out + 1] = table.concat(dots, "")
    out[#out + 1] = "</g>"
    local at = legend[i]
    out[#out + 1] = string.format('<g class="legend"><rect x="%d" y="%d" width="12" height="12" fill="%s"%s/><text x="%d" y="%d">%s</text></g>',
      at.x, at.y, color, s.dash and ' fill-opacity="0.45"' or "", at.x + 16, at.y + 10, esc(s.name))
  end
  local notes = {}
  if c.note then notes[#notes + 1] = tostring(c.note) end
  if dropped > 0 then notes[#notes + 1] = string.format("%d point(s) not finite or beyond ±1e15 left out", dropped) end
  if #notes > 0 then
    out[#out + 1] = string.format('<text class="chart-note" x="%d" y="20" text-anchor="end">%s</text>', W - R, esc(table.concat(notes, "; ")))
  end
  out[#out + 1] = "</svg>"
  return table.concat(out, "\n")
end

return M
