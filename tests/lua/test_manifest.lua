-- runara.manifest and runara.sha256: the run manifest's hashes against published vectors, its
-- fields from a machine's and a server's answers (and "unknown (why)" where they cannot tell,
-- never a guess), the loads' seeds and prompt sets, and the Manifest section of both reports.
local t = require("t")
local sha256 = require("runara.sha256")
local manifest = require("runara.manifest")
local report = require("runara.report")
local fx = require("fixtures.report_results")

t.test("sha256: FIPS 180-4 vectors, padding edges, every byte value, a million bytes", function()
  t.eq(sha256(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
  t.eq(sha256("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
  t.eq(sha256("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"), "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
  -- 55 bytes: the length fits the first block; 56: it needs a second; 64: a whole block of data.
  t.eq(sha256(string.rep("a", 55)), "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318")
  t.eq(sha256(string.rep("a", 56)), "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a")
  t.eq(sha256(string.rep("a", 64)), "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb")
  local bytes = {}
  for i = 0, 255 do bytes[#bytes + 1] = string.char(i) end
  t.eq(sha256(table.concat(bytes)), "40aff2e9d2d8922e47afd4648e6967497158785fbd1da870e7110266bf944880")
  t.eq(sha256(string.rep("a", 1000000)), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
  t.raises(function() sha256(42) end, "sha256: argument must be a string, got number")
end)

t.test("manifest.script: this file's own bytes hashed", function()
  local s = manifest.script()
  t.match(s.path, "test_manifest%.lua$")
  t.eq(s.sha256, sha256(runara.read_file("test_manifest.lua")))
  t.eq(#s.sha256, 64)
end)

-- A session stand-in whose exec answers with canned output, recording the commands it was sent.
local function session(stdout, fail)
  local sent = {}
  return { name = "llama70b", sent = sent, exec = function(_, cmd)
    sent[#sent + 1] = cmd
    if fail then error("ssh: the connection was lost", 0) end
    return { stdout = stdout, code = 0 }
  end }
end

local ZERO = string.rep("0", 64)
local REV = "6f6073b423013f6a7d4d9f39144961bfbfbc386b"

t.test("manifest.machine: a droplet's facts, and unknown (why) for what the machine did not tell", function()
  local d = { name = "llama70b-1", size = "gpu-mi300x1-192gb", region = "atl1", price_hourly = 1.99 }
  local info = { gpu = "AMD Instinct MI300X", gpu_count = 1, gpu_vram_gib = 192, gpu_backend = "amd-smi", driver_version = "6.8.5",
                 rocm_version = "6.2.0", kernel = "6.8.0-45-generic", arch = "x86_64", os = "Ubuntu 24.04.1 LTS" }
  local m = manifest.machine({ kind = "droplet", droplet = d, info = info, label = "llama70b" }, { image = "gpu-amd-base" })
  t.eq(m.size, "gpu-mi300x1-192gb")
  t.eq(m.region, "atl1")
  t.eq(m.image, "gpu-amd-base")
  t.eq(m.price_usd_per_hour, 1.99)
  t.eq(m.gpu_vram_gib, 192)
  t.eq(m.rocm_version, "6.2.0")
  t.eq(m.cuda_version, nil, "an AMD machine has no CUDA line")
  t.eq(m.kernel, "6.8.0-45-generic")
  -- A machine of yours whose GPU tool failed and whose os-release is empty: every gap says why.
  local mine = manifest.machine({ kind = "machine", session = { name = "box" }, label = "box",
                                  info = { gpu_error = "no GPU tool found (amd-smi, rocm-smi, nvidia-smi)" } }, {})
  t.match(mine.size, "^unknown %(a machine of yours %(%-%-on%): runara did not create it%)$")
  t.match(mine.gpu, "^unknown %(no GPU tool answered: no GPU tool found")
  t.match(mine.driver_version, "^unknown %(")
  t.match(mine.rocm_version, "^unknown %(")
  t.match(mine.cuda_version, "^unknown %(")
  t.eq(mine.kernel, "unknown (uname -r printed nothing)")
  t.eq(mine.os, "unknown (/etc/os-release has no PRETTY_NAME)")
  -- An NVIDIA machine whose nvidia-smi header had no CUDA line.
  local nv = manifest.machine({ kind = "droplet", droplet = d, info = { gpu_backend = "nvidia-smi", gpu = "NVIDIA H100 80GB HBM3" } }, {})
  t.eq(nv.cuda_version, "unknown (nvidia-smi's header names no CUDA version)")
  t.eq(nv.rocm_version, nil)
end)

t.test("manifest.serving: image digest and model revision from one remote command", function()
  local s = session('["rocm/vllm@sha256:' .. ZERO .. '"] sha256:' .. ZERO .. "\n\n--runara-refs--\n" .. REV .. "\n--runara-snapshots--\n" .. REV .. "\n")
  local server = { mode = "docker", image = "rocm/vllm:latest", model = "meta-llama/Llama-3.3-70B-Instruct", version = "0.6.4",
                   command = "docker run --rm --name runara-vllm-x rocm/vllm:latest serve 'meta-llama/Llama-3.3-70B-Instruct'" }
  local sv = manifest.serving(s, server, "llama70b")
  t.eq(#s.sent, 1, "one remote command")
  t.match(s.sent[1], "docker image inspect %-%-format '{{json %.RepoDigests}} {{%.Id}}' 'rocm/vllm:latest'", "the image inspected")
  t.match(s.sent[1], "models%-%-meta%-llama%-%-Llama%-3%.3%-70B%-Instruct/refs/main", "the model's cache entry read")
  t.eq(sv.image_digest, "rocm/vllm@sha256:" .. ZERO)
  t.eq(sv.image_id, "sha256:" .. ZERO)
  t.eq(sv.model_revision, REV)
  t.eq(sv.vllm_version, "0.6.4")
  t.eq(sv.command, server.command)
  -- Docker does not know the image; the cache has no entry: both said, with the machine's words.
  local s2 = session("Error response from daemon: No such image: rocm/vllm:latest\n\n--runara-refs--\ncat: /root/.cache/huggingface/hub/models--meta-llama--Llama-3.3-70B-Instruct/refs/main: No such file or directory\n--runara-snapshots--\nls: cannot access 'x': No such file or directory\n")
  local sv2 = manifest.serving(s2, { mode = "docker", image = "rocm/vllm:latest", model = server.model, version = "unknown" })
  t.eq(sv2.image_digest, "unknown (docker image inspect: Error response from daemon: No such image: rocm/vllm:latest)")
  t.eq(sv2.model_revision, "unknown (no revision in the machine's Hugging Face cache: cat: /root/.cache/huggingface/hub/models--meta-llama--Llama-3.3-70B-Instruct/refs/main: No such file or directory)")
  t.eq(sv2.vllm_version, "unknown (the server's start-up log has no 'vLLM API server version' line)")
  t.eq(sv2.command, "unknown (the server was not started by runara.vllm)")
  -- pip mode: no image; a machine that does not answer: every remote fact unknown, nothing raised.
  local sv3 = manifest.serving(session("", true), { mode = "pip", model = "gpt2", version = "0.6.4", command = "vllm serve 'gpt2'" })
  t.eq(sv3.image, "none (vLLM installed on the machine with pip)")
  t.eq(sv3.model_revision, "unknown (the model id is not ORG/NAME, so no Hugging Face cache entry to read)")
  local sv4 = manifest.serving(session("", true), { mode = "docker", image = "x", model = "a/b" })
  t.eq(sv4.image_digest, "unknown (the machine did not answer: ssh: the connection was lost)")
  t.eq(sv4.model_revision, "unknown (the machine did not answer: ssh: the connection was lost)")
end)

t.test("manifest.build: each load's seed and prompt set (same definition, same hash), the tokenizer", function()
  local fields = { runara = { version = "0.1.0", run_id = "00000000" }, params = { size = "gpu-mi300x1-192gb", levels = { 64, 128 } } }
  local prompts = { input_tokens = 256, range_ratio = 0 }
  local entries = {
    { name = "a", inputs = { seed = 0, prompts = prompts, max_tokens = 128, tokenizer_id = "meta-llama/Llama-3.3-70B-Instruct" } },
    { name = "b", inputs = { seed = 0, prompts = { range_ratio = 0, input_tokens = 256 }, max_tokens = 128, tokenizer_id = "meta-llama/Llama-3.3-70B-Instruct" } },
    { name = "c", inputs = { seed = 7, prompts = prompts, max_tokens = 128, tokenizer_id = "meta-llama/Llama-3.3-70B-Instruct" } },
    { name = "d" },  -- a load whose result named nothing: left out
  }
  local man = manifest.build(fields, entries)
  t.eq(man.seeds.a, 0)
  t.eq(man.seeds.c, 7)
  t.eq(man.seeds.d, nil)
  t.eq(man.prompt_sets.a.sha256, man.prompt_sets.b.sha256, "the same definition, whatever its key order")
  t.truthy(man.prompt_sets.a.sha256 ~= man.prompt_sets.c.sha256, "another seed is another prompt set")
  t.eq(man.prompt_sets.a.sha256, sha256(man.prompt_sets.a.definition))
  t.match(man.prompt_sets.a.definition, 'input_tokens', "the definition is kept beside its hash")
  t.eq(man.tokenizer.client, "meta-llama/Llama-3.3-70B-Instruct")
  t.match(man.tokenizer.counting, "input_tokens_source")
  t.eq(manifest.build(nil, {}), nil, "nothing to say: no manifest")
  local rows = manifest.rows(man)
  local text = {}
  for _, r in ipairs(rows) do text[#text + 1] = r[1] .. " = " .. r[2] end
  text = table.concat(text, "\n")
  t.match(text, "runara = version 0%.1%.0, run 00000000")
  t.match(text, "params = levels=64,128 size=gpu%-mi300x1%-192gb")
  t.match(text, "seeds = 0 %(a, b%); 7 %(c%)")
  t.match(text, "prompt set: a = sha256 %x+")
end)

t.test("a report's manifest: in results.json and in both reports, loads' seeds from their results", function()
  local rep = report.new{ title = "manifest", simulated = true }
  rep:manifest{ runara = { version = "0.1.0", run_id = "00000000" }, script = { path = "scripts/x.lua", sha256 = ZERO },
                params = { size = "gpu-mi300x1-192gb" },
                machines = { manifest.machine({ kind = "droplet", label = "x", droplet = { name = "x-1", size = "gpu-mi300x1-192gb", region = "atl1", price_hourly = 1.99 },
                                                info = { gpu = "AMD Instinct MI300X", gpu_count = 1, gpu_vram_gib = 192, gpu_backend = "amd-smi" } }, { image = "gpu-amd-base" }) },
                serving = { { mode = "docker", image = "rocm/vllm:latest", image_digest = "rocm/vllm@sha256:" .. ZERO, vllm_version = "0.6.4",
                              command = "docker run | x", model = "m/n", model_revision = manifest.unknown("not in the cache") } } }
  local load = fx.load("concurrent_32", 32, 64, { options = { seed = 3, prompts = { input_tokens = 256 }, max_tokens = 128 }, tokenizer_id = "m/n" })
  rep:add_load("concurrent_32", load, { kind = "concurrent", concurrency = 32 })
  local doc = rep:document()
  t.eq(doc.manifest.script.sha256, ZERO)
  t.eq(doc.manifest.seeds.concurrent_32, 3)
  t.eq(doc.manifest.machines[1].gpu_vram_gib, 192)
  t.eq(doc.manifest.machines[1].driver_version, "unknown (amd-smi did not report a driver version)")
  t.eq(#doc.manifest.prompt_sets.concurrent_32.sha256, 64)
  local r = rep:render()
  t.match(r.md, "\n## Manifest\n")
  t.match(r.md, "| script | scripts/x%.lua · sha256 " .. ZERO .. " |")
  t.match(r.md, "| GPU | 1 × AMD Instinct MI300X · 192 GiB each · driver unknown %(amd%-smi did not report a driver version%) · ROCm unknown")
  t.match(r.md, "| vLLM command | docker run \\| x |", "a command line is a cell's text")
  t.match(r.md, "| model | m/n · revision unknown %(not in the cache%) |")
  t.match(r.html, '<table id="manifest">')
  t.match(r.html, "seeds</td><td>3 %(concurrent_32%)")
end)

t.done()
