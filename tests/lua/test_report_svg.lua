-- runara.report_svg: a chart is drawn in bounded time whatever the numbers (NaN, ±inf, -1e300,
-- a span too small for its magnitude, a million points), every coordinate it writes is a finite
-- number, and what a script names it is escaped.
local t = require("t")
local svg = require("runara.report_svg")

-- Every number in the chart's coordinates and the count of some elements.
local function check_coordinates(out)
  for attr, value in out:gmatch('(%a+)="([^"]*)"') do
    if attr == "cx" or attr == "cy" or attr == "x1" or attr == "x2" or attr == "y1" or attr == "y2" or attr == "points" then
      t.no_match(value:lower(), "nan", attr .. " holds NaN")
      t.no_match(value:lower(), "inf", attr .. " holds inf")
      for n in value:gmatch("[-%d%.e+]+") do
        local x = tonumber(n)
        t.truthy(x and x > -1e6 and x < 1e6, attr .. "=" .. value .. " is a coordinate on the page")
      end
    end
  end
end

local function count(text, pattern)
  local n = 0
  for _ in text:gmatch(pattern) do n = n + 1 end
  return n
end

local quick = t.quick

t.test("non-finite and absurd samples are left out, the rest drawn", function()
  local out = quick(1, function()
    return svg.chart{ title = "GPU power", series = { { name = "power GPU 0", points = {
      { 0, -1e300 }, { 1, 0 / 0 }, { 2, math.huge }, { 3, -math.huge }, { 0 / 0, 5 }, { 4, 300 }, { 5, 310 }, { 6, 1e300 }, "junk" } } } }
  end)
  t.match(out, "^<svg")
  t.match(out, "</svg>$")
  t.eq(count(out, "<circle"), 2)
  t.match(out, "6 point%(s%) not finite or beyond ±1e15 left out")
  check_coordinates(out)
end)

t.test("only absurd samples: no axes, a sentence", function()
  local out = quick(1, function() return svg.chart{ title = "x", series = { { name = "s", points = { { 0, -1e300 }, { 1, 1e300 } } } } } end)
  t.match(out, "2 point%(s%) out of range, none to draw")
  t.eq(count(out, "<circle"), 0)
  local empty = svg.chart{ title = "x", series = {} }
  t.match(empty, "no data")
end)

t.test("extreme ranges and spans: ticks stay few, loops end", function()
  local cases = {
    { { 0, -1e15 }, { 1, 1e15 } },                -- the largest span allowed
    { { 0, 1e14 }, { 1, 1e14 + 0.001 } },         -- a span below the magnitude's precision
    { { 0, 5 } },                                 -- one point
    { { 3, 7 }, { 3, 7 } },                       -- the same point twice
    { { -1e-300, 1e-300 }, { 1e-300, -1e-300 } }, -- denormal-small
    { { 0, -5 }, { 1, -3 } },                     -- all negative
  }
  for i, pts in ipairs(cases) do
    local out = quick(1, function() return svg.chart{ title = "case " .. i, series = { { name = "s", points = pts } } } end)
    t.truthy(count(out, 'class="tick"') <= 2 * 14, "case " .. i .. ": a bounded number of ticks")
    t.truthy(count(out, "<circle") == #pts, "case " .. i .. ": every point drawn")
    check_coordinates(out)
  end
end)

t.test("a log axis with many distinct concurrencies labels at most 12 of them", function()
  local pts = {}
  for c = 1, 500 do pts[#pts + 1] = { c, c * 2 } end
  local out = svg.chart{ title = "sweep", xlog = true, series = { { name = "s", points = pts } } }
  t.truthy(count(out, 'text%-anchor="middle">') <= 12 + 2, "x ticks (and the x-axis label)")
  check_coordinates(out)
end)

t.test("a million samples are thinned and keep their peaks", function()
  local pts = {}
  for i = 1, 1000000 do pts[i] = { i * 0.001, i == 777777 and 900 or 300 } end
  local out = quick(10, function() return svg.chart{ title = "GPU power", series = { { name = "power", points = pts, dots = false } } } end)
  local n = count(out, "<circle")
  t.truthy(n <= 2000 and n > 500, n .. " points drawn")
  t.match(out, 'data%-y="900"', "the peak survives thinning")
end)

t.test("marks: a label at the y axis is drawn right of its line, elsewhere left of it", function()
  local out = svg.chart{ title = "x", series = { { name = "s", points = { { 0, 1 }, { 100, 2 } } } },
    marks = { { x = 0, label = "boot" }, { x = 50, label = "load" } } }
  local function label_x(name)
    local line_x, text_x = out:match('data%-label="' .. name .. '"><line x1="([%d.]+)".-<text x="([%d.]+)"')
    return tonumber(line_x), tonumber(text_x)
  end
  local bl, bt = label_x("boot")
  local ll, lt = label_x("load")
  t.truthy(bt > bl, "the label at the axis is right of its line")
  t.truthy(lt < ll, "a label elsewhere is left of its line")
end)

t.test("marks: at most 40, only inside the range, close ones merged, labels escaped", function()
  local marks = {}
  for i = 1, 100 do marks[i] = { x = i * 19, label = "<b>m" .. i } end  -- 13 px apart; 52 inside the range
  marks[#marks + 1] = { x = 0 / 0, label = "nan" }
  local out = svg.chart{ title = "x", series = { { name = "s", points = { { 0, 1 }, { 1000, 2 } } } }, marks = marks }
  t.eq(count(out, 'class="mark"'), 40)
  t.no_match(out, "<b>")
  t.match(out, "&lt;b&gt;m1<")
  local close = svg.chart{ title = "x", series = { { name = "s", points = { { 0, 1 }, { 100, 2 } } } },
                           marks = { { x = 5, label = "c=64" }, { x = 5.2, label = "sweep-c64" }, { x = 50, label = "c=128" } } }
  t.eq(count(close, 'class="mark"'), 2)
  t.match(close, 'data%-label="sweep%-c64"', "the later of two close marks")
  t.no_match(close, 'data%-label="c=64"')
end)

t.test("titles, series names and notes are escaped", function()
  local out = svg.chart{ title = "<script>alert(1)</script>", x_label = "\"x\"", note = "<i>n</i>",
                         series = { { name = "a\" onload=\"alert(1)", points = { { 1, 1 } } } } }
  t.no_match(out, "<script")
  t.no_match(out, "<i>")
  t.no_match(out, 'onload="')
  t.match(out, 'data%-series="a&quot; onload=&quot;alert%(1%)"')
end)

t.test("the legend wraps inside the chart and pushes the plot down", function()
  local series = {}
  for i = 1, 10 do series[i] = { name = "a rather long series name number " .. i, points = { { i, i } } } end
  local out = svg.chart{ title = "x", series = series }
  t.eq(count(out, '<g class="legend">'), 10)
  for x in out:gmatch('<g class="legend"><rect x="(%d+)"') do t.truthy(tonumber(x) < 760 - 20, "legend entry at x=" .. x) end
  local rows = {}
  for y in out:gmatch('<g class="legend"><rect x="%d+" y="(%d+)"') do rows[y] = true end
  local n = 0
  for _ in pairs(rows) do n = n + 1 end
  t.truthy(n >= 3, n .. " legend rows")
end)

t.test("dashed series and hollow points for too few samples", function()
  local out = svg.chart{ title = "x", series = { { name = "p99", dash = true, few = { [1] = 5 }, points = { { 1, 10 }, { 2, 12 } } } } }
  t.match(out, 'stroke%-dasharray="6 4"')
  t.eq(count(out, 'class="few"'), 1)
  t.match(out, 'data%-samples="5"')
end)

t.done()
