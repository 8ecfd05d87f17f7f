-- runara.finetune: torchtune's metric log read from lines recorded in public torchtune pull
-- requests (fixtures/finetune/, sources in fixtures/README.md), MAD's way of summarising it, the
-- recipe command lines, and the errors a fine-tuning run meets.
local t = require("t")
local finetune = require("runara.finetune")

local pr1358 = runara.read_file("fixtures/finetune/torchtune_pr1358_codellama7b_stdout.txt")
local pr2406 = runara.read_file("fixtures/finetune/torchtune_pr2406_llama3.1_8b_full_mps_log.txt")
local gated = runara.read_file("fixtures/finetune/hf_hub_gated_repo_401.txt")

t.test("finetune.parse: a run's stdout — the DiskLogger path, twelve steps, the other lines skipped", function()
  local log = finetune.parse(pr1358)
  t.eq(log.log_path, "/tmp/CodeLlama-7b-hf/logs/log_1723844072.txt")
  t.eq(#log.steps, 12)
  t.eq(log.steps[1].step, 1); t.near(log.steps[1].loss, 2.085338592529297, 1e-15)
  t.near(log.steps[1].lr, 2e-05, 1e-20)
  t.near(log.steps[12].tokens_per_second_per_gpu, 542.9797193194343, 1e-9)
  t.eq(log.steps[12].peak_memory_alloc, nil)  -- that run did not log memory
  t.eq(log.unparsed, 0)
end)

t.test("finetune.parse: log_dict lines with peak memory and torchtune's trailing space", function()
  local log = finetune.parse(pr2406)
  t.eq(#log.steps, 6); t.eq(log.log_path, nil)
  local s = log.steps[6]
  t.near(s.loss, 1.046566128730774, 1e-15); t.near(s.peak_memory_active, 47.32488775253296, 1e-12)
  t.near(s.peak_memory_alloc, 57.90928649902344, 1e-12); t.near(s.peak_memory_reserved, 57.90928649902344, 1e-12)
end)

t.test("finetune.parse: one metric per line (DiskLogger.log) merges into its step; odd values are counted, not kept", function()
  local log = finetune.parse("Step 3 | loss:1.5\nStep 3 | lr:2e-05\nStep 2 | loss:tensor(1.75)\n" ..
                             "[rank0]:Step 4 | loss:nan tokens_per_second_per_gpu:abc\n1|3|Loss: 1.5: 100%|##########| 3/3\n")
  t.eq(#log.steps, 3)
  t.eq(log.steps[1].step, 2); t.eq(log.steps[1].loss, 1.75)  -- a tensor's value
  t.eq(log.steps[2].loss, 1.5); t.eq(log.steps[2].lr, 2e-05)
  t.eq(log.steps[3].step, 4); t.eq(log.steps[3].loss, nil)
  t.eq(log.unparsed, 2)
  t.raises(function() finetune.parse(nil) end, "argument 'text' must be a string", "test_finetune.lua")
end)

t.test("finetune.summary: MAD's last-half mean tokens/s/GPU and largest peak_memory_alloc", function()
  local s = finetune.summary(finetune.parse(pr1358), 2)
  -- steps 7..12 (n = 12, from floor(12/2)+1 = 7), as Torchtune_Tester_Qwen.sh's awk does
  local want = (408.6546853024294 + 402.3016704011016 + 698.9489335304891 + 962.2259327743811 + 477.88804137904646 +
                542.9797193194343) / 6
  t.eq(s.from_step, 7); t.eq(s.steps, 12)
  t.near(s.tokens_per_s_per_gpu, want, 1e-9); t.near(s.tokens_per_s, 2 * want, 1e-9)
  t.eq(s.peak_memory_alloc, nil)
  t.near(s.loss_first, 2.085338592529297, 1e-15); t.near(s.loss_last, 1.1174635887145996, 1e-15)
  local m = finetune.summary(finetune.parse(pr2406), 1)
  t.eq(m.from_step, 4)
  t.near(m.peak_memory_alloc, 57.90928649902344, 1e-12)  -- the largest of steps 4..6
  t.near(m.tokens_per_s_per_gpu, (40.134742736816406 + 23.665254592895508 + 55.77537155151367) / 3, 1e-9)
  t.eq(finetune.summary({ steps = {} }, 8).tokens_per_s_per_gpu, nil)
end)

t.test("finetune.failure_cause: huggingface_hub's 401 for a gated repo, an OOM, anything else", function()
  local g = finetune.failure_cause(gated)
  t.eq(g.kind, "gated")
  t.match(g.cause, "^Cannot access gated repo for url https://huggingface.co/black%-forest%-labs/FLUX%.1%-dev/")
  t.match(g.cause, "Access to model black%-forest%-labs/FLUX%.1%-dev is restricted%.")
  local o = finetune.failure_cause("Traceback ...\ntorch.OutOfMemoryError: HIP out of memory. Tried to allocate 2.00 GiB.\n")
  t.eq(o.kind, "oom"); t.match(o.cause, "^torch%.OutOfMemoryError: HIP out of memory")
  local e = finetune.failure_cause("Traceback\nModuleNotFoundError: No module named 'torchtune'\n")
  t.eq(e.kind, "error"); t.eq(e.cause, "ModuleNotFoundError: No module named 'torchtune'")
end)

t.test("finetune.model: known recipes, gated organisations, an unknown model names config=", function()
  local q = finetune.model("Qwen/Qwen3-8B")
  t.eq(q.config, "qwen3/8B"); t.eq(q.gated, false); t.eq(q.tokenizer.merges_file, "merges.txt")
  t.eq(finetune.model("meta-llama/Llama-3.1-8B-Instruct").gated, true)
  t.eq(finetune.model("meta-llama/Some-Other", "llama3_1/8B").gated, true)  -- by its organisation
  -- The command line's mistakes: usage errors (exit 2, the message alone), as the scripts' param checks.
  local err = t.raises(function() finetune.model("acme/Unknown-7B") end, "give config=FAMILY/SIZE", "^param model=acme/Unknown%-7B: ")
  t.truthy(runara.is_usage_error(err), "a usage error")
  t.truthy(runara.is_usage_error(t.raises(function() finetune.model("not a model") end, "not a Hugging Face model id", "^param model=")))
end)

t.test("finetune commands: MAD's settings, FP8 only for the full recipe, no token on the command line", function()
  local m = finetune.model("Qwen/Qwen3-8B")
  local cmd = finetune.run_command{ model = m, method = "full", dtype = "fp8", gpus = 8, batch = 14, seq = 8192, steps = 20,
                                    compile = true, model_dir = "/w/models/Qwen3-8B", out_dir = "/w/out" }
  t.match(cmd, "^tune run %-%-nproc_per_node 8 full_finetune_distributed %-%-config qwen3/8B_full ")
  for _, want in ipairs({ "batch_size=14", "tokenizer.max_seq_len=8192", "max_steps_per_epoch=20", "log_peak_memory_stats=True",
                          "enable_fp8_training=True", "fp8_recipe_name=tensorwise", "tokenizer.path=/w/models/Qwen3%-8B/vocab.json",
                          "metric_logger.log_dir=/w/out/logs", "compile=True", "dataset.packed=True" }) do
    t.match(cmd, want)
  end
  local lora = finetune.run_command{ model = m, method = "lora", dtype = "bf16", gpus = 1, batch = 4, seq = 2048, steps = 5,
                                     compile = false, model_dir = "/m", out_dir = "/o" }
  t.truthy(not lora:find("fp8", 1, true), "no FP8 option for BF16")
  t.eq(finetune.download_command(m, "/w/models/Qwen3-8B"), "tune download Qwen/Qwen3-8B --output-dir /w/models/Qwen3-8B")
  t.eq(finetune.supports("full", "fp8"), true)
  local ok, why = finetune.supports("lora", "fp8")
  t.eq(ok, false); t.match(why, "no FP8 training")
end)

t.test("seed 001's fine-tuning figures: total = per GPU × 8 as printed", function()
  local ref, seed = finetune.reference("full", "fp8")
  t.eq(ref.tokens_per_s_per_gpu, 20497); t.match(seed.source, "Benchmark 5")
  for key, r in pairs(seed.runs) do t.near(r.tokens_per_s_per_gpu * seed.gpus, r.tokens_per_s, 8, key) end
  t.eq(finetune.reference("lora", "fp8"), nil)
end)

t.done()
