-- Line charts as inline SVG, for report.html: no script, no font or file from the network.
-- chart{ title, x_label, y_label, xlog, series = { {name =, points = {{x, y}, ...}}, ... },
--        marks = { {x =, label =}, ... } } -> "<svg ...>...</svg>"
-- Each series is <g class="series" data-series="NAME"> with one element per point carrying
-- data-x / data-y, so a test (or a reader's tools) can find the numbers again.
local M = {}

local W, H = 760, 340
local L, R, T, B = 70, 20, 52, 52
local COLORS = { "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf" }

function M.escape(text)
  return (tostring(text):gsub("[&<>\"']", { ["&"] = "&amp;", ["<"] = "&lt;", [">"] = "&gt;", ['"'] = "&quot;", ["'"] = "&#39;" }))
end
local esc = M.escape

local function finite(v) return type(v) == "number" and v == v and v ~= math.huge and v ~= -math.huge end

-- Round-number ticks between lo and hi.
local function ticks(lo, hi, n)
  if hi <= lo then hi = lo + 1 end
  local raw = (hi - lo) / (n or 5)
  local mag = 10 ^ math.floor(math.log10(raw))
  local step = mag
  for _, m in ipairs({ 1, 2, 2.5, 5, 10 }) do
    if raw <= m * mag then step = m * mag break end
  end
  -- From the last tick at or below lo to the first at or above hi, so every point fits.
  local out, v = {}, math.floor(lo / step + 1e-9) * step
  repeat
    out[#out + 1] = v
    v = v + step
  until out[#out] >= hi - step * 1e-9
  return out, step
end

local function label(v)
  if math.abs(v) >= 1e6 then return string.format("%.3gM", v / 1e6) end
  if math.abs(v) >= 1e4 then return string.format("%.3gk", v / 1e3) end
  if v == math.floor(v) then return string.format("%d", v) end
  return string.format("%.3g", v)
end

function M.chart(c)
  local pts, xs = 0, {}
  local x0, x1, ymin, y1 = math.huge, -math.huge, 0, -math.huge
  for _, s in ipairs(c.series or {}) do
    for _, p in ipairs(s.points or {}) do
      if finite(p[1]) and finite(p[2]) and (not c.xlog or p[1] > 0) then
        pts = pts + 1
        if c.xlog then xs[#xs + 1] = p[1] end
        x0, x1 = math.min(x0, p[1]), math.max(x1, p[1])
        ymin, y1 = math.min(ymin, p[2]), math.max(y1, p[2])
      end
    end
  end
  local out = { string.format('<svg xmlns="http://www.w3.org/2000/svg" class="chart" viewBox="0 0 %d %d" role="img" aria-label="%s">', W, H, esc(c.title or "")) }
  out[#out + 1] = string.format('<text x="%d" y="20" class="title">%s</text>', L, esc(c.title or ""))
  if pts == 0 then
    out[#out + 1] = string.format('<text x="%d" y="%d" class="empty">not measured</text></svg>', W / 2 - 40, H / 2)
    return table.concat(out, "\n")
  end
  local y0 = ymin
  if y1 <= y0 then y1 = y0 + 1 end
  local fx
  if c.xlog then
    local a, b = math.log(x0), math.log(math.max(x1, x0 * 2))
    fx = function(x) return L + (math.log(x) - a) / (b - a) * (W - L - R) end
  else
    if x1 <= x0 then x1 = x0 + 1 end
    fx = function(x) return L + (x - x0) / (x1 - x0) * (W - L - R) end
  end
  local yt = ticks(y0, y1)
  local ytop = yt[#yt]
  local fy = function(y) return H - B - (y - y0) / (ytop - y0) * (H - T - B) end
  -- grid and axes
  for _, v in ipairs(yt) do
    out[#out + 1] = string.format('<line class="grid" x1="%d" x2="%d" y1="%.1f" y2="%.1f"/><text class="tick" x="%d" y="%.1f" text-anchor="end">%s</text>',
      L, W - R, fy(v), fy(v), L - 6, fy(v) + 4, label(v))
  end
  local xt = {}
  if c.xlog then
    local seen = {}
    for _, x in ipairs(xs) do if not seen[x] then seen[x] = true xt[#xt + 1] = x end end
    table.sort(xt)
  else
    xt = ticks(x0, x1)
  end
  for _, v in ipairs(xt) do
    out[#out + 1] = string.format('<text class="tick" x="%.1f" y="%d" text-anchor="middle">%s</text>', fx(v), H - B + 18, label(v))
  end
  out[#out + 1] = string.format('<line class="axis" x1="%d" x2="%d" y1="%d" y2="%d"/>', L, W - R, H - B, H - B)
  out[#out + 1] = string.format('<line class="axis" x1="%d" x2="%d" y1="%d" y2="%d"/>', L, L, T, H - B)
  out[#out + 1] = string.format('<text class="axis-label" x="%d" y="%d" text-anchor="middle">%s</text>', (L + W - R) / 2, H - 12, esc(c.x_label or ""))
  out[#out + 1] = string.format('<text class="axis-label" transform="translate(16 %d) rotate(-90)" text-anchor="middle">%s</text>', (T + H - B) / 2, esc(c.y_label or ""))
  -- phase marks
  for _, m in ipairs(c.marks or {}) do
    if finite(m.x) and m.x >= x0 and m.x <= x1 then
      local x = fx(m.x)
      out[#out + 1] = string.format('<g class="mark" data-label="%s"><line x1="%.1f" x2="%.1f" y1="%d" y2="%d"/><text x="%.1f" y="%d" transform="rotate(-90 %.1f %d)">%s</text></g>',
        esc(m.label), x, x, T, H - B, x - 3, H - B - 4, x - 3, H - B - 4, esc(m.label))
    end
  end
  -- series, with the legend in a row under the title
  local legend_x
  for i, s in ipairs(c.series) do
    local color = COLORS[(i - 1) % #COLORS + 1]
    local path, dots = {}, {}
    for _, p in ipairs(s.points or {}) do
      if finite(p[1]) and finite(p[2]) and (not c.xlog or p[1] > 0) then
        path[#path + 1] = string.format("%.1f,%.1f", fx(p[1]), fy(p[2]))
        dots[#dots + 1] = string.format('<circle cx="%.1f" cy="%.1f" r="%s" data-x="%s" data-y="%s"><title>%s: %s, %s</title></circle>',
          fx(p[1]), fy(p[2]), s.dots == false and "0.8" or "3", label(p[1]), string.format("%.4g", p[2]), esc(s.name), label(p[1]), string.format("%.4g", p[2]))
      end
    end
    out[#out + 1] = string.format('<g class="series" data-series="%s" stroke="%s" fill="%s">', esc(s.name), color, color)
    if #path > 1 then out[#out + 1] = '<polyline fill="none" stroke-width="2" points="' .. table.concat(path, " ") .. '"/>' end
    out[#out + 1] = table.concat(dots, "")
    out[#out + 1] = "</g>"
    legend_x = legend_x or L
    out[#out + 1] = string.format('<g class="legend"><rect x="%d" y="30" width="12" height="12" fill="%s"/><text x="%d" y="40">%s</text></g>',
      legend_x, color, legend_x + 16, esc(s.name))
    legend_x = legend_x + 28 + 7 * math.min(#tostring(s.name), 24)
  end
  out[#out + 1] = "</svg>"
  return table.concat(out, "\n")
end

return M
