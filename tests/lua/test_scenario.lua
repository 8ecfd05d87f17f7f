-- runara.scenario: declared params (types, choices, defaults, typos), the --help text, and
-- declaration mistakes reported at the script author's line.
local t = require("t")
local scenario = require("runara.scenario")

local DECL = {
  { name = "size", default = "gpu-mi300x1-192gb", help = "droplet size" },
  { name = "max_model_len", type = "integer", default = 8192, min = 1, help = "vLLM --max-model-len" },
  { name = "ratio", type = "number", default = 0.5, min = 0, max = 1 },
  { name = "mode", default = "docker", choices = { "docker", "pip" } },
  { name = "remote", type = "boolean", default = true },
  { name = "levels", type = "integers", min = 1, default = { 64, 128 } },
  { name = "profile", default = function() return "computed" end, default_help = "full; quick under --sim" },
  { name = "image" },
}

t.test("params: defaults when nothing is given, a function default called", function()
  local p = scenario.parse_params(DECL, {})
  t.eq(p.size, "gpu-mi300x1-192gb"); t.eq(p.max_model_len, 8192); t.eq(p.ratio, 0.5)
  t.eq(p.mode, "docker"); t.eq(p.remote, true); t.eq(p.levels[2], 128); t.eq(p.profile, "computed"); t.eq(p.image, nil)
end)

t.test("params: values converted to their declared types", function()
  local p = scenario.parse_params(DECL, { "size=gpu-h100x1-80gb", "max_model_len=4096", "ratio=0.25", "mode=pip",
                                          "remote=false", "levels=1,2,3", "image=x=y" })
  t.eq(p.size, "gpu-h100x1-80gb"); t.eq(p.max_model_len, 4096); t.eq(p.ratio, 0.25); t.eq(p.mode, "pip")
  t.eq(p.remote, false); t.eq(#p.levels, 3); t.eq(p.levels[3], 3); t.eq(p.image, "x=y")
end)

t.test("params: image and region follow the size, given or defaulted; given ones win", function()
  local defaults = require("runara.droplet_defaults")
  local decl = { { name = "size", default = "gpu-mi300x1-192gb" }, defaults.image_param(), defaults.region_param() }
  local p = scenario.parse_params(decl, {})
  t.eq(p.image, "gpu-amd-base"); t.eq(p.region, "atl1")
  p = scenario.parse_params(decl, { "size=gpu-h100x1-80gb" })
  t.eq(p.image, "gpu-h100x1-base"); t.eq(p.region, "nyc2")
  p = scenario.parse_params(decl, { "size=gpu-h100x8-640gb" })
  t.eq(p.image, "gpu-h100x8-base"); t.eq(p.region, "nyc2")
  p = scenario.parse_params(decl, { "size=gpu-mi300x8-1536gb", "region=tor1", "image=my-snapshot" })
  t.eq(p.image, "my-snapshot"); t.eq(p.region, "tor1")
  -- A size it does not know keeps the MI300X defaults (the API then says what the size needs).
  p = scenario.parse_params(decl, { "size=s-1vcpu-1gb" })
  t.eq(p.image, "gpu-amd-base"); t.eq(p.region, "atl1")
  t.eq(defaults.for_size(nil).region, "atl1")
  -- A computed default sees the others wherever it is declared, even before the size.
  local early = { defaults.region_param(), { name = "size", default = "gpu-h100x1-80gb" } }
  t.eq(scenario.parse_params(early, {}).region, "nyc2")
  t.match(scenario.help({ params = decl }, "s.lua"), "where the size is offered: atl1 %(MI300X%), nyc2 %(H100%)")
end)

t.test("params: a typo is refused with the closest name", function()
  t.raises(function() scenario.parse_params(DECL, { "sise=gpu-h100x1-80gb" }) end, "unknown param 'sise' (did you mean 'size'?)")
  local err = t.raises(function() scenario.parse_params(DECL, { "zzzzzz=1" }) end, "unknown param 'zzzzzz';")
  t.match(err, "this scenario's params: size, max_model_len")
end)

t.test("params: ill-typed values say what was expected", function()
  t.raises(function() scenario.parse_params(DECL, { "max_model_len=abc" }) end, "param max_model_len=abc: must be a number")
  t.raises(function() scenario.parse_params(DECL, { "max_model_len=1.5" }) end, "must be a whole number")
  t.raises(function() scenario.parse_params(DECL, { "max_model_len=0" }) end, "must be at least 1")
  t.raises(function() scenario.parse_params(DECL, { "ratio=2" }) end, "must be at most 1")
  t.raises(function() scenario.parse_params(DECL, { "ratio=nan" }) end, "must be a number")
  t.raises(function() scenario.parse_params(DECL, { "mode=podman" }) end, "param mode=podman: must be one of docker, pip")
  t.raises(function() scenario.parse_params(DECL, { "remote=maybe" }) end, "must be true or false")
  t.raises(function() scenario.parse_params(DECL, { "levels=64,x" }) end, "comma-separated list of whole numbers >= 1")
  t.raises(function() scenario.parse_params(DECL, { "levels=0" }) end, "comma-separated list")
end)

t.test("params: a stray argument is refused, --help is not a param", function()
  t.raises(function() scenario.parse_params(DECL, { "verbose" }) end, "argument 'verbose': a scenario takes params as KEY=VALUE")
  t.raises(function() scenario.parse_params(DECL, { "=3" }) end, "argument '=3'")
  t.eq(scenario.parse_params(DECL, { "--help" }).size, "gpu-mi300x1-192gb")
end)

t.test("help: every param with its type, choices and default", function()
  local text = scenario.help({ about = "What it measures.", params = DECL }, "scripts/x.lua")
  t.match(text, "usage: runara %[OPTIONS%] scripts/x.lua %[KEY=VALUE ...%]")
  t.match(text, "What it measures.")
  t.match(text, "max_model_len%s+vLLM %-%-max%-model%-len %(integer, default 8192%)")
  t.match(text, "mode%s+%(docker|pip, default docker%)")
  t.match(text, "levels%s+%(integers, default 64,128%)")
  t.match(text, "profile%s+%(string, default full; quick under %-%-sim%)")
  t.match(text, "image%s+%(string, default none%)")
  t.match(text, "%-%-on USER@HOST")
  t.match(scenario.help({ params = {} }), "Params:\n  none")
end)

t.test("help lists only the --on forms the scenario accepts", function()
  local both = scenario.help({ params = {} })
  t.match(both, "%-%-on USER@HOST runs it on a machine of yours")
  t.match(both, "%-%-on http%(s%)://HOST:PORT against a running server")
  local machine = scenario.help({ params = {}, needs_machine = true })
  t.match(machine, "%-%-on USER@HOST")
  t.eq(machine:find("--on http", 1, true), nil)
  local none = scenario.help({ params = {}, on = {}, on_refused = "two droplets side by side" })
  t.match(none, "Where it runs: droplets it creates itself; it takes no %-%-on %(two droplets side by side%)%.")
  t.eq(none:find("--on USER@HOST", 1, true), nil)
  t.raises(function() scenario.run({ params = {}, on = { "ssh" } }, function() end) end,
           "option 'on': each form must be \"machine\" (--on USER@HOST) or \"endpoint\" (--on URL), got ssh", "test_scenario.lua:%d+:")
end)

t.test("declaration mistakes point at the script author's line", function()
  local body = function() end
  t.raises(function() scenario.run("x", body) end, "scenario.run: argument 'declaration' must be a table", "test_scenario.lua:%d+:")
  t.raises(function() scenario.run({ params = { { name = "a b" } } }, body) end, "params[1] must be a table with a name",
           "test_scenario.lua:%d+:")
  t.raises(function() scenario.run({ params = { { name = "a" }, { name = "a" } } }, body) end, "param 'a' is declared twice",
           "test_scenario.lua:%d+:")
  t.raises(function() scenario.run({ params = { { name = "a", type = "float" } } }, body) end,
           "type must be string, number, integer, integers or boolean, got float", "test_scenario.lua:%d+:")
  t.raises(function() scenario.run({ params = {} }, nil) end, "argument 'body' must be a function", "test_scenario.lua:%d+:")
end)

t.test("where: a droplet of the run unless --on says otherwise", function()
  t.eq(scenario.where(), "droplet")
  t.eq(runara.on.machine, nil)
  t.eq(runara.on.endpoint, nil)
end)

-- A machine that answers runara.machine.workdir's mktemp as mktemp would, and records every command.
local function machine_with_home()
  local s, n = { name = "box", commands = {} }, 0
  function s:exec(cmd)
    self.commands[#self.commands + 1] = cmd
    local template = cmd:match('mktemp %-d "%$HOME"/(%S+)XXXXXXXX$')
    if template then
      n = n + 1
      return { code = 0, stdout = "/home/you/" .. template .. "Made000" .. n .. "\n", stderr = "" }
    end
    return { code = 0, stdout = "", stderr = "" }
  end
  return { session = s }
end

local function removals(s)
  local out = {}
  for _, cmd in ipairs(s.commands) do
    local path = cmd:match("^rm %-rf %-%- '([^']+)'")
    if path then out[#out + 1] = path end
  end
  return out
end

-- Last (scenario.run writes this run's report): sc:workdir's folders are removed by their exact
-- paths when the body ends, on success and after an error; nothing else is removed.
t.test("sc:workdir: a new folder per call, each removed by its own path when the scenario ends, also on an error", function()
  local m = machine_with_home()
  local got = {}
  scenario.run({ params = {}, title = "workdir", summary = function() end }, function(sc)
    got[1] = sc:workdir(m, "gemm")
    got[2] = sc:workdir(m, "training")
    t.eq(#removals(m.session), 0, "nothing removed while the body runs")
  end)
  local prefix = "/home/you/.cache/runara/runs/" .. runara.run_id
  t.eq(got[1], prefix .. "-gemm.Made0001")
  t.eq(got[2], prefix .. "-training.Made0002")
  t.eq(table.concat(removals(m.session), " "), got[2] .. " " .. got[1], "last made, first removed; by path, never a bare name")

  local failing = machine_with_home()
  local ok, err = pcall(scenario.run, { params = {}, title = "workdir", summary = function() end }, function(sc)
    got[3] = sc:workdir(failing, "mlperf")
    error("the benchmark failed", 0)
  end)
  t.eq(ok, false)
  t.eq(err, "the benchmark failed")
  t.eq(table.concat(removals(failing.session), " "), got[3])

  t.raises(function()
    scenario.run({ params = {}, title = "workdir", summary = function() end }, function(sc) sc:workdir(nil, "x") end)
  end, "sc:workdir: argument 'machine' must be what sc:machine returned (or a node of sc:cluster), got nil")
  t.raises(function()
    scenario.run({ params = {}, title = "workdir", summary = function() end }, function(sc) sc:workdir(m, "a/b") end)
  end, "sc:workdir: argument 'name' must be up to 64 letters")
end)

t.done()
