-- Attempt: stop a run's report from being written, and plant links in it: GPU readings of -1e300 W
-- (and ±1.7e308, NaN, ±inf, a time of -1e300) sent the charts' tick loop of report.html round
-- forever (a step of inf from an overflowing span: the report never came, the run hung until its
-- deadline), printed 300-digit figures and "nan" in report.md; a GPU name, a model id and a vLLM
-- version chosen by a machine or a server put a javascript: link, a remote image, an <img> tag
-- and terminal escapes into both reports.
-- Why it must fail: charts leave out points not finite or beyond ±1e15 and say how many, their
-- loops are capped; figures beyond 1e15 are printed as 1e+300; every string from a script, a
-- machine or a server goes through report_format's escapes (Markdown, HTML, control characters).
-- expect: safe
-- flags: --max-runtime 10
local report = require("runara.report")

local values = { -1e300, 1e300, 1.7e308, -1.7e308, 0 / 0, math.huge, -math.huge }
local samples = {}
for i, v in ipairs(values) do
  samples[#samples + 1] = { t_s = i, gpus = { { index = 0, power_w = 500, vram_used_bytes = 1e9 }, { index = 1, power_w = v, vram_used_bytes = v } } }
end
samples[#samples + 1] = { t_s = -1e300, gpus = { { index = 0, power_w = 1, vram_used_bytes = 1 } } }
samples[#samples + 1] = { t_s = 9, gpus = { { index = 0, power_w = 600, vram_used_bytes = 2e9 } } }

local rep = report.new{ title = "![](http://evil.example/t.png)" }
rep:metadata{ gpu = "[x](javascript:alert(1))\27]0;pwned\7", model = "<img src=x onerror=alert(1)>",
              framework = "vLLM ![](http://evil.example/v.png)\r\n# forged", cost_usd = -1e300, gpu_vram_gb = 0 / 0 }
rep:add_gpu({ samples = samples, marks = { { t_s = 1.7e308, label = "<script>" } },
              summary = { mean_power_w = 1e300, peak_vram_bytes = -1.7e308, gpus = { { index = 0, max_power_w = 1.7e308, energy_j = 0 / 0 } } } })
rep:phase("load")
local t0 = os.clock()
local paths = rep:write()
local r = rep:render()
local seconds = os.clock() - t0

local md_outside_code = r.md:gsub("```text.-```", "")
local bad = {}
if not (paths and r.html:find("</html>\n$")) then bad[#bad + 1] = "report.html not whole" end
if seconds > 2 then bad[#bad + 1] = string.format("%.1f s to write", seconds) end
if r.md:find("%d" .. string.rep("%d", 20)) or r.html:find("%d" .. string.rep("%d", 20)) then bad[#bad + 1] = "a 300-digit figure" end
if r.md:find("%f[%w]nan%f[%W]") or r.md:find("%f[%w]inf%f[%W]") then bad[#bad + 1] = "nan or inf in report.md" end
if r.html:find("<img") or r.html:find("<script") or r.md:find("<img") then bad[#bad + 1] = "an HTML tag got through" end
if md_outside_code:find("[^\\]%]%(") or md_outside_code:find("^%[") or md_outside_code:find("[^\\]%[") then bad[#bad + 1] = "a Markdown link or image got through" end
if (r.md .. r.html):find("[\27\7\r]") then bad[#bad + 1] = "a terminal escape got into a report" end
if r.md:find("\n# forged") then bad[#bad + 1] = "a forged heading" end
if #bad > 0 then print("ESCAPED: " .. table.concat(bad, "; ")) end
print("SAFE")
