-- runara.gemm: reading gemm_bench.py's output (fixtures/gemm_bench_output.txt, see its README).
local t = require("t")
local gemm = require("runara.gemm")

local text = runara.read_file("fixtures/gemm_bench_output.txt")

t.test("gemm.parse: one result per well-formed line, chatter and broken lines skipped", function()
  local results, rows = gemm.parse(text)
  t.eq(#results, 3); t.eq(#rows, 3)
  t.eq(results[1].m, 8192); t.eq(results[1].k, 8192); t.eq(results[1].dtype, "bf16")
  t.eq(results[1].name, "Standard Square (8K)"); t.near(results[1].median_ms, 1.7411, 1e-9); t.near(results[1].tflops, 631.5, 1e-9)
  t.eq(rows[2][1], "(16384, 1024, 8192)"); t.eq(rows[2][3], "fp16"); t.eq(rows[2][4], "0.471"); t.eq(rows[2][5], "583")
end)

t.test("gemm.parse: the TFLOPS a line states agree with its shape and time (2·M·N·K / t)", function()
  for _, r in ipairs((gemm.parse(text))) do
    t.near(2 * r.m * r.n * r.k / (r.median_ms * 1e-3) / 1e12, r.tflops, r.tflops * 0.01, r.name)
  end
end)

t.test("gemm.peaks: the best TFLOPS per dtype", function()
  local p = gemm.peaks((gemm.parse(text)))
  t.near(p.bf16, 631.5, 1e-9); t.near(p.fp16, 583.4, 1e-9)
end)

t.test("gemm.parse: nothing to read gives no results; a non-string is refused at the caller", function()
  t.eq(#(gemm.parse("")), 0)
  t.eq(#(gemm.parse("Traceback (most recent call last):\nRuntimeError: No HIP GPUs are available\n")), 0)
  t.raises(function() gemm.parse(nil) end, "gemm.parse: argument 'text' must be a string, got nil", "test_gemm.lua:%d+:")
end)

t.done()
