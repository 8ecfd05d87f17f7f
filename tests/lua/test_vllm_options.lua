-- runara.vllm: every option error of vllm.start points at this file's line and comes before
-- anything happens on the machine (the session here is a fake that records any remote call).
local t = require("t")
local vllm = require("runara.vllm")

local HERE = "test_vllm_options.lua:%d+:"
local MODEL = "meta-llama/Llama-3.3-70B-Instruct"

-- A stand-in for an ssh session: every remote call is recorded and fails.
local function fake_session()
  local s = { name = "fake-droplet", calls = {} }
  for _, m in ipairs({ "exec", "spawn", "forward", "upload", "download" }) do
    s[m] = function(self, ...)
      self.calls[#self.calls + 1] = m
      error("fake session: " .. m .. " called", 0)
    end
  end
  return s
end

-- opts with `model` added unless given (false: leave it out).
local function with_model(opts)
  local o = { model = MODEL }
  for k, v in pairs(opts) do o[k] = v end
  if o.model == false then o.model = nil end
  return o
end

local function rejects(opts, plain)
  local s = fake_session()
  local err = t.raises(function() vllm.start(s, opts) end, plain, HERE)
  t.eq(#s.calls, 0, "remote calls before the error (" .. plain .. ")")
  t.match(err, "vllm.start: ", "prefix")
  return err
end

t.test("options must be a table", function()
  rejects(nil, "vllm.start: options must be a table, got nil")
  rejects(MODEL, "vllm.start: options must be a table, got string")
end)

t.test("unknown options: did you mean", function()
  rejects({ modle = MODEL }, "vllm.start: unknown option 'modle' (did you mean 'model'?)")
  rejects(with_model{ mdoe = "pip" }, "unknown option 'mdoe' (did you mean 'mode'?)")
  rejects(with_model{ quantisation = "fp8" }, "unknown option 'quantisation' (did you mean 'quantization'?)")
  rejects(with_model{ ["hf-token"] = "x" }, "unknown option 'hf-token' (did you mean 'hf_token'?)")
  rejects(with_model{ Port = 8000 }, "unknown option 'Port' (did you mean 'port'?)")
  local err = rejects(with_model{ tp = 8 }, "unknown option 'tp' (options: ")
  t.match(err, "tensor_parallel_size", "the list of options")
  t.no_match(err, "did you mean", "no guess for a name far from every option")
end)

t.test("model is required", function()
  rejects({}, "option 'model' is required (e.g. model = ")
  rejects({ model = "" }, "option 'model' is required")
  rejects({ model = 70 }, "option 'model' is required")
end)

t.test("mode, gpu and port", function()
  rejects(with_model{ mode = "podman" }, "option 'mode' must be \"docker\" or \"pip\", got \"podman\"")
  rejects(with_model{ gpu = "intel" }, "option 'gpu' must be \"amd\" or \"nvidia\", got \"intel\"")
  rejects(with_model{ port = 0 }, "option 'port' must be a whole number from 1 to 65535, got 0")
  rejects(with_model{ port = 65536 }, "got 65536")
  rejects(with_model{ port = 80.5 }, "got 80.5")
  rejects(with_model{ port = "8000" }, "option 'port' must be a whole number from 1 to 65535, got \"8000\"")
end)

t.test("strings, whole numbers, fractions, seconds, flags", function()
  rejects(with_model{ image = 1 }, "option 'image' must be a non-empty string, got 1")
  rejects(with_model{ quantization = true }, "option 'quantization' must be a non-empty string")
  rejects(with_model{ dtype = "" }, "option 'dtype' must be a non-empty string, got \"\"")
  rejects(with_model{ log = {} }, "option 'log' must be a non-empty string, got an empty table")
  rejects(with_model{ max_model_len = "8k" }, "option 'max_model_len' must be a whole number >= 1, got \"8k\"")
  rejects(with_model{ tensor_parallel_size = 0 }, "option 'tensor_parallel_size' must be a whole number >= 1, got 0")
  rejects(with_model{ gpu_memory_utilization = 90 }, "option 'gpu_memory_utilization' must be a number above 0 and at most 1, got 90")
  rejects(with_model{ gpu_memory_utilization = 0 }, "option 'gpu_memory_utilization'")
  rejects(with_model{ ready_timeout = -5 }, "option 'ready_timeout' must be a number of seconds above 0, got -5")
  rejects(with_model{ poll = "2" }, "option 'poll' must be a number of seconds above 0")
  rejects(with_model{ quiet = "no" }, "option 'quiet' must be true or false, got \"no\"")
  rejects(with_model{ install = 0 }, "option 'install' must be true or false, got 0")
end)

t.test("extra_args", function()
  rejects(with_model{ extra_args = "--enforce-eager" }, "option 'extra_args' must be a list of strings, got \"--enforce-eager\"")
  rejects(with_model{ extra_args = { "--max-num-seqs", true } }, "option 'extra_args' must be a list of strings; item 2 is true")
end)

t.test("check_options: the same message, nothing raised, nil when all is well", function()
  t.eq(vllm.check_options{ model = MODEL, prot = 8000 }, "vllm.start: unknown option 'prot' (did you mean 'port'?)")
  t.eq(vllm.check_options{ model = MODEL, gpu = "amd", port = 8000, extra_args = { "--enforce-eager" } }, nil)
  t.eq(vllm.check_options(nil), "vllm.start: options must be a table, got nil")
end)

t.test("valid options pass the checks and reach the machine", function()
  local s = fake_session()
  local err = t.raises(function()
    vllm.start(s, { model = MODEL, mode = "pip", gpu = "nvidia", port = 8001, quantization = "fp8", dtype = "auto",
      max_model_len = 8192, gpu_memory_utilization = 0.9, tensor_parallel_size = 1, extra_args = { "--max-num-seqs", 256 },
      ready_timeout = 60, poll = 0.5, log = "v.log", quiet = true, install = false })
  end, "fake session: ")
  t.no_match(err, "vllm.start: option", "an option check")
  t.truthy(#s.calls >= 1, "a remote call")
end)

t.done()
