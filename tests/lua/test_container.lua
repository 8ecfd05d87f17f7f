-- runara.container: each vendor's `docker run` line carries only that vendor's devices and images
-- (issue 24: the simulated H100 once started rocm/vllm with --device /dev/kfd), vendor detection
-- by the machine's GPU tool, and option errors at the caller's line.
local t = require("t")
local container = require("runara.container")

local AMD_ONLY = { "/dev/kfd", "/dev/dri", "rocm/", "--group-add video", "seccomp=unconfined" }
local NVIDIA_ONLY = { "--gpus all", "vllm/vllm-openai", "nvcr.io/nvidia/" }

local function has(text, plain) return text:find(plain, 1, true) ~= nil end

local function none_of(text, list, what)
  for _, x in ipairs(list) do
    if has(text, x) then error(what .. " carries " .. x .. ": " .. text, 2) end
  end
end

-- A stand-in for an ssh session: answers the detection command as a machine with `tools` would.
local function machine(name, tools)
  return { name = name, commands = {}, exec = function(self, cmd, _)
    self.commands[#self.commands + 1] = cmd
    local amd = (tools.amd and "amd" or "none")
    local nvidia = (tools.nvidia and "nvidia" or "none")
    return { stdout = amd .. " " .. nvidia .. "\n", stderr = "", code = 0 }
  end }
end

local function vllm_line(vendor)
  return container.command{ vendor = vendor, purpose = "vllm", name = "runara-vllm-" .. runara.run_id,
    ipc = "host", network = "host", env = { "HF_TOKEN" }, mounts = { "$HOME/.cache/huggingface:/root/.cache/huggingface" },
    entrypoint = "vllm", command = "serve 'meta-llama/Llama-3.3-70B-Instruct' --port 8000" }
end

t.test("NVIDIA vLLM: --gpus all and NVIDIA's image, nothing of AMD's", function()
  local line = vllm_line("nvidia")
  t.match(line, "^docker run %-%-rm ")
  t.truthy(has(line, " --gpus all "), "--gpus all")
  t.truthy(has(line, " vllm/vllm-openai:latest serve 'meta-llama/Llama-3.3-70B-Instruct' --port 8000"), "image then command")
  t.truthy(has(line, "--entrypoint vllm "), "entrypoint named")
  none_of(line, AMD_ONLY, "the NVIDIA line")
end)

t.test("AMD vLLM: ROCm devices and AMD's image, nothing of NVIDIA's", function()
  local line = vllm_line("amd")
  t.truthy(has(line, "--device /dev/kfd --device /dev/dri --group-add video --security-opt seccomp=unconfined"), "devices")
  t.truthy(has(line, " rocm/vllm:latest serve "), "image")
  none_of(line, NVIDIA_ONLY, "the AMD line")
end)

t.test("vLLM line: run name, host ipc/network, token passed by name, cache mounted", function()
  local line = vllm_line("nvidia")
  t.truthy(has(line, "--name runara-vllm-" .. runara.run_id .. " "), "per-run name")
  t.truthy(has(line, "--ipc=host --network=host"), "ipc/network")
  t.truthy(has(line, " -e HF_TOKEN "), "the token's name only, never its value")
  t.truthy(has(line, ' -v "$HOME/.cache/huggingface:/root/.cache/huggingface" '), "$HOME left to the machine's shell")
end)

t.test("PyTorch for GEMM: each vendor's image, hipBLASLt only on AMD", function()
  local amd = container.command{ vendor = "amd", purpose = "pytorch", mounts = { "$HOME/gemm:/workspace" }, command = "python3 x.py" }
  local nv = container.command{ vendor = "nvidia", purpose = "pytorch", mounts = { "$HOME/gemm:/workspace" }, command = "python3 x.py" }
  t.truthy(has(amd, " rocm/pytorch:latest python3 x.py"), amd)
  t.truthy(has(amd, "-e TORCH_BLAS_PREFER_HIPBLASLT=1"), amd)
  t.truthy(has(nv, " nvcr.io/nvidia/pytorch:24.10-py3 python3 x.py"), nv)
  t.no_match(nv, "HIPBLASLT")
  none_of(nv, AMD_ONLY, "the NVIDIA GEMM line")
  none_of(amd, NVIDIA_ONLY, "the AMD GEMM line")
end)

t.test("an image of one's own keeps the vendor's device flags", function()
  local line = container.command{ vendor = "nvidia", image = "my/image:1", command = "run" }
  t.truthy(has(line, "--gpus all my/image:1 run"), line)
  t.eq(container.command{ vendor = "amd", image = "it's odd" }:match("'.*'$"), "'it'\\''s odd'")
end)

t.test("MLPerf's harness is AMD's only", function()
  t.eq(container.image("amd", "mlperf"), "mlperf/llama_inference:latest")
  t.raises(function() container.image("nvidia", "mlperf") end, "there is no NVIDIA container for mlperf", "test_container.lua:%d+:")
  t.raises(function() container.command{ vendor = "nvidia", purpose = "mlperf" } end,
    "container.command: there is no NVIDIA container for mlperf", "test_container.lua:%d+:")
end)

t.test("image(): per vendor and purpose", function()
  t.eq(container.image("amd", "vllm"), "rocm/vllm:latest")
  t.eq(container.image("nvidia", "vllm"), "vllm/vllm-openai:latest")
  t.raises(function() container.image("intel", "vllm") end, "vendor must be \"amd\" or \"nvidia\"", "test_container.lua:%d+:")
  t.raises(function() container.image("amd", "training") end, "unknown purpose training", "test_container.lua:%d+:")
end)

t.test("command(): bad specs are errors at the caller's line", function()
  t.raises(function() container.command{ purpose = "vllm" } end, "vendor must be", "test_container.lua:%d+:")
  t.raises(function() container.command{ vendor = "amd" } end, "give option 'purpose'", "test_container.lua:%d+:")
  t.raises(function() container.command{ vendor = "amd", purpose = "vllm", nmae = "x" } end, "unknown option 'nmae'", "test_container.lua:%d+:")
  t.raises(function() container.command{ vendor = "amd", purpose = "vllm", name = "a b" } end, "option 'name'", "test_container.lua:%d+:")
  t.raises(function() container.command{ vendor = "amd", purpose = "vllm", mounts = { "/x" } } end, "HOST:CONTAINER", "test_container.lua:%d+:")
  t.raises(function() container.command{ vendor = "amd", purpose = "vllm", env = { "A B" } } end, "neither NAME", "test_container.lua:%d+:")
end)

t.test("vendor(): by the machine's GPU tool", function()
  t.eq(container.vendor(machine("h100", { nvidia = true })), "nvidia")
  t.eq(container.vendor(machine("mi300x", { amd = true })), "amd")
  t.raises(function() container.vendor(machine("cpu-box", {})) end,
    "container.vendor: no GPU tool (amd-smi, rocm-smi or nvidia-smi) on cpu-box", "test_container.lua:%d+:")
  t.raises(function() container.vendor(machine("both", { amd = true, nvidia = true })) end, "both has both AMD", "test_container.lua:%d+:")
  t.raises(function() container.vendor(nil) end, "argument 'session'", "test_container.lua:%d+:")
  local v, msg = container.detect(machine("cpu-box", {}))
  t.eq(v, nil)
  t.match(msg, "cpu%-box")
end)

t.test("size_vendor(): by the DigitalOcean size slug", function()
  t.eq(container.size_vendor("gpu-mi300x8-1536gb"), "amd")
  t.eq(container.size_vendor("gpu-h100x1-80gb"), "nvidia")
  t.eq(container.size_vendor("gpu-h200x8-1128gb"), "nvidia")
  t.eq(container.size_vendor("s-1vcpu-1gb"), nil)
end)

t.done()
