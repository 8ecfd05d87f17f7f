-- Every way a script might show the API token: the droplet object, the account, logs, results,
-- the environment, errors from the API and its own error. The test looks for the token in all
-- output. params: echo=TEXT (printed, logged, recorded and raised back), pause=SECONDS (after
-- "LEAK READY", while the test injects API failures).
local p = runara.params
local d = droplet.create{ name = "leak", size = "s-1vcpu-1gb", image = "ubuntu-22-04-x64", region = "nyc3" }
print(tostring(d))
runara.log(tostring(d))
for k, v in pairs(d) do print("field", k, tostring(v)) end
print("metatable", tostring(getmetatable(d)))
local account = droplet.account()
for k, v in pairs(account) do print("account", k, tostring(v)) end
runara.result("account", account)
runara.result("droplet", { id = d.id, name = d.name, text = tostring(d) })
print("getenv", pcall(os.getenv, "DIGITALOCEAN_TOKEN"))
print("secret", pcall(runara.secret, "DIGITALOCEAN_TOKEN"))
if p.echo then
  print("echo " .. p.echo)
  runara.log("echo " .. p.echo)
  runara.result("echo", p.echo)
end
print("LEAK READY")
runara.sleep(tonumber(p.pause or "0"))
print("refresh", pcall(d.refresh, d))
print("account", pcall(droplet.account))
print("create", pcall(droplet.create, { size = "gpu-contract-x", image = "gpu-amd-base", region = "atl1" }))
error("the scenario fails on purpose after " .. tostring(d) .. (p.echo and (" " .. p.echo) or ""))
