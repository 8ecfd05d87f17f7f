-- A real recording of scripts/training/train_bench.py (tests/fixtures/training/, see its README)
-- read by runara.training. Registered apart from the test_*.lua files (tests/CMakeLists.txt):
-- it reads outside tests/lua/, granted with --allow-read, and is skipped while no recording exists.
local t = require("t")
local training = require("runara.training")

local path = (runara.params.dir or "") .. "/h200_quick.jsonl"
local ok, text = pcall(runara.read_file, path)
if not ok then
  print("SKIPPED: no recording yet at " .. path)
  return
end

t.test("a real run: every line is a known part, the env line names the GPU and torch", function()
  local r = training.parse(text)
  local lines = 0
  for _ in text:gmatch("[^\n]+") do lines = lines + 1 end
  local n = 1 + #r.matmul + #r.linear + #r.fp8 + #r.mlp + #r.transformer + #r.ddp
  t.eq(n, lines, "stdout holds JSON lines and nothing else")
  t.eq(r.other, 0)
  t.match(r.env.gpu, "H[12]00"); t.match(r.env.torch, "^%d+%.%d+")
  t.truthy(#r.matmul > 0 and #r.transformer > 0, "the quick run measures matmuls and the transformer")
end)

t.test("a real run: params, tokens/s and MFU agree with runara.training", function()
  local r = training.parse(text)
  for _, x in ipairs(r.transformer) do
    if x.status == "ok" then
      t.eq(x.params, training.param_count(training.SIZES[x.size]), x.size)
      t.near(x.batch * x.seq * x.steps * x.world_size / x.total_s, x.tokens_per_s, x.tokens_per_s * 0.01, x.size)
      local mfu = training.mfu(training.model_tflops(x).with_attention / x.world_size, r.env.gpu, x.dtype)
      t.truthy(mfu and mfu > 0 and mfu < 1, x.size .. ": MFU " .. tostring(mfu))
    end
  end
  for _, m in ipairs(r.matmul) do
    t.truthy(m.tflops < training.peak(r.env.gpu, m.dtype), "matmul " .. m.n .. " below the dense peak")
  end
end)

t.done()
