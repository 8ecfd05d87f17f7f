-- runara.training: reading train_bench.py's output (fixtures/training/, see fixtures/README.md),
-- and the TFLOPS, MFU and scaling formulas checked against seed 001's own tables.
local t = require("t")
local training = require("runara.training")
local refs = require("runara.reference_numbers")

local seed = refs.training_seed001
local h200 = runara.read_file("fixtures/training/train_bench_h200.txt")
local h100 = runara.read_file("fixtures/training/train_bench_h100_oom_ddp.txt")

t.test("training.parse: each part's lines, chatter and broken lines skipped", function()
  local r = training.parse(h200)
  t.eq(r.env.gpu, "NVIDIA H200"); t.eq(r.env.torch, "2.5.0a0+e000cf0ad9.nv24.10"); t.eq(r.env.cuda, "12.6")
  t.eq(r.env.hip, nil)  -- null: no HIP on NVIDIA
  t.eq(#r.matmul, 4); t.eq(#r.linear, 2); t.eq(#r.fp8, 1); t.eq(#r.mlp, 1); t.eq(#r.transformer, 2); t.eq(#r.ddp, 0)
  t.eq(r.other, 1)  -- the unknown part; the cut line, the array and the NaN are no objects at all
  t.eq(r.matmul[2].n, 8192); t.eq(r.matmul[2].dtype, "fp16"); t.near(r.matmul[2].tflops, 702.5, 1e-9)
  t.eq(r.linear[1].name, "Standard Square (8K)"); t.near(r.linear[1].linear_tflops, 709.8, 1e-9)
  t.eq(r.fp8[1].status, "ok"); t.eq(r.fp8[1].dtype, "float8_e4m3fn")
  t.near(r.mlp[1].samples_per_s, 83660.1, 1e-9)
  t.eq(r.transformer[1].size, "small"); t.eq(r.transformer[1].status, "ok")
end)

t.test("training.parse: the stated figures agree with each line's own sizes and times", function()
  local r = training.parse(h200)
  for _, m in ipairs(r.matmul) do t.near(2 * m.n ^ 3 / (m.median_ms * 1e-3) / 1e12, m.tflops, m.tflops * 0.01, "matmul " .. m.n) end
  for _, x in ipairs(r.transformer) do
    t.near(x.batch * x.seq * x.steps * x.world_size / x.total_s, x.tokens_per_s, x.tokens_per_s * 0.01, x.size)
    t.eq(x.params, training.param_count(training.SIZES[x.size]), x.size .. ": params as runara.training counts them")
  end
end)

t.test("training.parse: an OOM is a skipped row with the memory it tried; fp8 not available keeps its reason", function()
  local r = training.parse(h100)
  t.eq(r.env.gpu, "NVIDIA H100 80GB HBM3")
  local oom = r.ddp[1]
  t.eq(oom.size, "13b"); t.eq(oom.status, "skipped"); t.eq(oom.reason, "out of memory")
  t.eq(oom.tried_bytes, 1342177280); t.truthy(oom.estimated_bytes > oom.memory_total_bytes, "the estimate exceeds the GPU")
  t.match(oom.error, "^CUDA out of memory%. Tried to allocate 1%.25 GiB")
  t.eq(training.model_tflops(oom), nil)
  t.eq(r.fp8[1].status, "not available"); t.match(r.fp8[1].reason, "_scaled_mm")
end)

t.test("model TFLOPS: 6·N·tokens/s gives seed 001's TFLOPS column within 5 % for every row", function()
  for name, row in pairs(seed.transformer) do
    local c = training.SIZES[name]
    local f = training.flops_per_token(row.params, c.layers, row.seq, c.d_model)
    t.near(f.six_n * row.tokens_per_s / 1e12, row.tflops, row.tflops * 0.05, name .. " (the seed's rounded params)")
    local exact = training.flops_per_token(training.param_count(c), c.layers, row.seq, c.d_model)
    t.near(exact.six_n * row.tokens_per_s / 1e12, row.tflops, row.tflops * 0.05, name .. " (params counted)")
  end
end)

t.test("model TFLOPS: the seed's column leaves the attention term out (PaLM's formula is 5-9 % higher)", function()
  for _, name in ipairs({ "small", "7b" }) do
    local row, c = seed.transformer[name], training.SIZES[name]
    local tf = training.model_tflops{ status = "ok", tokens_per_s = row.tokens_per_s, params = row.params,
                                      layers = c.layers, seq = row.seq, d_model = c.d_model }
    local over = tf.with_attention / row.tflops
    t.truthy(over > 1.04 and over < 1.10, name .. ": with attention / seed = " .. over)
    t.near(tf.with_attention - tf.six_n, 12 * c.layers * row.seq * c.d_model * row.tokens_per_s / 1e12, 1e-9)
  end
end)

t.test("param_count: the seed's parameter column from its layer table (GPT-2 vocabulary, tied head)", function()
  for name, row in pairs(seed.transformer) do
    local n = training.param_count(training.SIZES[name])
    t.near(n, row.params, row.params * 0.01, name)
  end
end)

t.test("training.scaling: seed 001's DDP efficiencies from its tokens/s", function()
  local rows = {}
  for _, p in ipairs(seed.ddp_7b) do rows[#rows + 1] = { size = "7b", status = "ok", world_size = p.gpus, tokens_per_s = p.tokens_per_s } end
  local s = training.scaling(rows)["7b"]
  t.eq(#s, 4)
  for i, p in ipairs(seed.ddp_7b) do t.near(s[i].efficiency, p.efficiency, 0.002, p.gpus .. " GPUs") end
  -- From the fixture: 1, 2, 4 GPUs; the skipped 13B has no series.
  local f = training.scaling(training.parse(h100).ddp)
  t.eq(f["13b"], nil)
  t.near(f["3b"][2].efficiency, 16200 / (2 * 9000), 1e-9); t.near(f["3b"][3].efficiency, 30600 / (4 * 9000), 1e-9)
  -- No 1-GPU run: no efficiency rather than a made-up one.
  t.eq(training.scaling({ { size = "xl", status = "ok", world_size = 2, tokens_per_s = 5 } }).xl[1].efficiency, nil)
end)

t.test("MFU: achieved TFLOPS over the datasheet's dense peak, by device name", function()
  t.eq(training.gpu_key("AMD Instinct MI300X"), "mi300x"); t.eq(training.gpu_key("NVIDIA H100 80GB HBM3"), "h100_sxm")
  t.eq(training.gpu_key("NVIDIA H200"), "h200"); t.eq(training.gpu_key("NVIDIA H100 PCIe"), "h100_pcie")
  t.eq(training.gpu_key("AMD Instinct MI350X"), "mi350x"); t.eq(training.gpu_key("NVIDIA A10G"), nil)
  t.near(training.mfu(578.3, "AMD Instinct MI350X", "bf16"), 578.3 / 2306.9, 1e-12)
  t.near(training.mfu(494.7, "NVIDIA H200", "bf16"), 0.5, 1e-3)
  t.eq(training.mfu(100, "NVIDIA A10G", "bf16"), nil); t.eq(training.mfu(100, "NVIDIA H200", "int4"), nil)
  for key, g in pairs(refs.training_peaks.gpus) do
    t.match(g.source, "https://", key .. " cites its datasheet")
    t.truthy(g.dense_tflops.fp8 >= 2 * g.dense_tflops.bf16 - 1, key .. ": FP8 twice BF16")
  end
end)

t.test("training.parse and check_sizes: bad input is refused at the caller's line; a bad size is a usage error", function()
  t.raises(function() training.parse(nil) end, "training.parse: argument 'text' must be a string, got nil", "test_training.lua:%d+:")
  -- The command line's mistake: the message alone (no location), raised as runara.usage_error.
  local err = t.raises(function() training.check_sizes("small,70b") end, "param sizes=small,70b: unknown size '70b'; known: small, medium, large, xl, 1.5b, 3b, 7b, 13b", "^param ")
  t.truthy(runara.is_usage_error(err), "a usage error")
  t.raises(function() training.check_sizes("7bb", "ddp_size") end, "param ddp_size=7bb: unknown size '7bb'", "^param ")
  t.raises(function() training.check_sizes(" ") end, "param sizes is empty; known: small", "^param ")
  t.eq(#training.check_sizes("Small, 7b"), 2)
  t.eq(#training.parse("Traceback (most recent call last):\nModuleNotFoundError: No module named 'torch'\n").transformer, 0)
end)

t.test("decode_object: json.dumps's escapes; non-objects and broken lines are nil", function()
  local o = training.decode_object('{"a": "x\\"y\\\\z\\n", "b": -1.5e-3, "c": true, "d": null, "e": 7}')
  t.eq(o.a, 'x"y\\z\n'); t.near(o.b, -1.5e-3, 1e-15); t.eq(o.c, true); t.eq(o.d, nil); t.eq(o.e, 7)
  t.eq(training.decode_object('{"a": 1,}'), nil); t.eq(training.decode_object('{"a" 1}'), nil)
  t.eq(training.decode_object('{"a": Infinity}'), nil); t.eq(training.decode_object('{"a": "open'), nil)
  t.eq(next(training.decode_object("{}")), nil)
end)

t.done()
