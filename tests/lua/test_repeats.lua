-- runara.repeats: the interval against an independent computation, the combination of K load
-- results, and its argument errors at the caller's line.
local t = require("t")
local repeats = require("runara.repeats")

t.test("the 95 % t interval of the mean, against Python's statistics and a numerically integrated t", function()
  -- python3: statistics.mean/stdev of {10, 12, 11, 13, 9} = 11, 1.5811388; t(0.975, 4) = 2.776445
  -- (Simpson integration of Student's t density, bisected): 11 -/+ 2.776445 · 1.5811388 / sqrt(5)
  -- = 9.036757 … 12.963243. The table's 2.776 is within 2.5e-4 of that.
  local ci = repeats.interval({ 10, 12, 11, 13, 9 })
  t.eq(ci.n, 5); t.eq(ci.median, 11); t.near(ci.mean, 11, 1e-12)
  t.near(ci.sd, 1.5811388, 1e-6)
  t.near(ci.low, 9.036757, 1e-3); t.near(ci.high, 12.963243, 1e-3)
  -- Table entries checked the same way: df 1, 2, 9, 29.
  t.near(repeats.t975(1), 12.7062, 1e-3); t.near(repeats.t975(2), 4.3027, 1e-3)
  t.near(repeats.t975(9), 2.2622, 1e-3); t.near(repeats.t975(29), 2.0452, 1e-3)
  t.eq(repeats.t975(200), 1.96)
  -- An even count's median is the mean of the middle two; one value has no interval.
  t.eq(repeats.interval({ 4, 1, 3, 2 }).median, 2.5)
  local one = repeats.interval({ 7 })
  t.eq(one.median, 7); t.eq(one.low, nil)
  t.eq(repeats.interval({}), nil)
end)

t.test("K results become one: medians, intervals, the rest from the last run", function()
  local runs = {
    { label = "ttft-r1", output_throughput = 100, median_ttft_ms = 20, completed = 10, request_goodput = 1 },
    { label = "ttft-r2", output_throughput = 110, median_ttft_ms = 22, completed = 10 },
    { label = "ttft-r3", output_throughput = 90, median_ttft_ms = 30, completed = 9 },
  }
  local r = repeats.combine(runs)
  t.eq(r.output_throughput, 100); t.eq(r.median_ttft_ms, 22)
  t.eq(r.completed, 9); t.eq(r.label, "ttft-r3")
  t.eq(r.repeats.count, 3); t.eq(r.repeats.runs[2], "ttft-r2"); t.match(r.repeats.method, "Student")
  -- mean 100, s = 10, t(0.975, 2) = 4.303: 100 -/+ 24.843
  t.near(r.intervals.output_throughput.low, 100 - 4.303 * 10 / math.sqrt(3), 1e-9)
  t.near(r.intervals.output_throughput.high, 100 + 4.303 * 10 / math.sqrt(3), 1e-9)
  t.eq(r.intervals.request_goodput, nil)  -- not in every run: not combined
  t.eq(r.request_goodput, nil)
end)

t.test("repeats.run calls the load K times; once returns it as it is; bad arguments at the caller's line", function()
  local calls = {}
  local r = repeats.run(3, function(i) calls[#calls + 1] = i; return { label = "x" .. i, output_throughput = i } end)
  t.eq(#calls, 3); t.eq(r.output_throughput, 2); t.eq(r.repeats.count, 3)
  local seen = {}
  repeats.run(3, function(i) return { label = "z" .. i, output_throughput = i } end, function(so_far, i) seen[i] = so_far end)
  t.eq(seen[1].label, "z1"); t.eq(seen[1].repeats, nil)          -- the first run alone
  t.eq(seen[2].repeats.count, 2); t.eq(seen[2].output_throughput, 1.5)
  t.eq(seen[3].repeats.count, 3)
  local single = { label = "y", output_throughput = 5 }
  t.eq(repeats.run(1, function() return single end), single)
  t.raises(function() repeats.run(0, function() end) end, "count must be a whole number >= 1, got 0")
  t.raises(function() repeats.run(2.5, function() end) end, "got 2.5")
  t.raises(function() repeats.run(2, "load") end, "expected a function")
  t.raises(function() repeats.interval({ 1, "x" }) end, "item 2 is x")
end)

t.test("suite profiles use warm-up and repeats where they cost little", function()
  local suite = require("runara.suite")
  local loads = suite.plan({ profile = "full" })
  local by = {}
  for _, l in ipairs(loads) do by[l.name] = l end
  t.eq(by.throughput.repeats, 1); t.eq(by.ttft.repeats, 3); t.eq(by.ttft.warmup, 2)
  t.eq(by.concurrent_32.repeats, 3); t.eq(by.concurrent_32.warmup, 32)
  t.eq(suite.plan({ profile = "quick", repeats = 2 })[1].repeats, 2)  -- the option wins
  t.raises(function() suite.plan({ repeats = 0 }) end, "option 'repeats' must be a whole number from 1 to 20, got 0")
end)

t.done()
