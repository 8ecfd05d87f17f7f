-- Real recordings of scripts/training/train_bench.py, torchrun and PyTorch on an NVIDIA H200
-- (tests/fixtures/training/, sources in its README), read by runara.training. Registered apart
-- from the test_*.lua files (tests/CMakeLists.txt): it reads outside tests/lua/, granted with
-- --allow-read.
local t = require("t")
local training = require("runara.training")

local function fixture(name) return runara.read_file((runara.params.dir or "") .. "/" .. name) end
local text = fixture("h200_quick.jsonl")

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

t.test("a real run of the larger sizes: 7b's tokens/s give the model TFLOPS by the documented formula", function()
  local r = training.parse(fixture("h200_sizes.jsonl"))
  t.eq(#r.transformer, 4)
  for _, x in ipairs(r.transformer) do t.eq(x.status, "ok", x.size) end
  local seven = r.transformer[4]
  t.eq(seven.size, "7b")
  -- 6·N·tokens/s, by hand from the recorded line: 6 × 5,244,751,872 × 14,080.2 = 443.1 TFLOPS.
  t.near(training.model_tflops(seven).six_n, 6 * 5244751872 * 14080.2 / 1e12, 0.5)
  local mfu = training.mfu(training.model_tflops(seven).six_n, r.env.gpu, "bf16")
  t.truthy(mfu > 0.3 and mfu < 0.6, "H200 7b MFU " .. mfu)
end)

t.test("a real out-of-memory: the size is skipped with PyTorch's own message and what it tried", function()
  local r = training.parse(fixture("h200_oom.jsonl"))
  local x = r.transformer[1]
  t.eq(x.status, "skipped"); t.eq(x.reason, "out of memory")
  t.eq(x.tried_bytes, math.floor(2.5 * 2 ^ 30))
  t.match(x.error, "^CUDA out of memory%. Tried to allocate 2%.50 GiB")
  t.match(fixture("h200_oom.stderr"), "3b: out of memory: CUDA out of memory")
end)

t.test("a real torchrun run: the DDP lines parse, world size and tokens per GPU agree", function()
  local r = training.parse(fixture("h200_torchrun_1gpu.jsonl"))
  t.eq(#r.ddp, 2)
  for _, x in ipairs(r.ddp) do
    t.eq(x.world_size, 1); t.eq(x.tokens_per_s_per_gpu, x.tokens_per_s)
  end
end)

t.test("a real torchrun failure: the root-cause rank and its own error, not torchrun's wrapper", function()
  local why = training.failure_cause(fixture("h200_torchrun_rank_fails.stderr"))
  t.eq(why.rank, 1)  -- "Failures:" lists rank 0 first: torchrun's SIGTERM to it, not the cause
  t.eq(why.cause, "torch.AcceleratorError: CUDA error: invalid device ordinal")
  local oom = training.failure_cause("Traceback ...\ntorch.OutOfMemoryError: HIP out of memory. Tried to allocate 1.75 GiB.\n")
  t.eq(oom.rank, nil)
  t.match(oom.cause, "^torch%.OutOfMemoryError: HIP out of memory")
end)

t.done()
