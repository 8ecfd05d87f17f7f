-- Attempt: tag a droplet `RUNARA:run-OTHER`: DigitalOcean treats tags case-insensitively, so
-- another run's teardown, guardian or `runara reap --run OTHER` would take it for theirs.
-- Why it must fail: the `runara:` prefix is runara's own in any case; refused before anything is
-- sent.
-- expect: error tag 'RUNARA:run-OTHER' is reserved
droplet.create { tags = { "RUNARA:run-OTHER" }, size = "s-1vcpu-1gb", image = "ubuntu-22-04-x64", region = "nyc3" }
print("ESCAPED: a script set a runara run tag in upper case")
