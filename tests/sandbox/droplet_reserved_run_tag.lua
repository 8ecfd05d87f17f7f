-- Attempt: tag a droplet `runara:run-OTHER`, so that another run's teardown, its guardian or
-- `runara reap --run OTHER` takes it for theirs (and destroys it, or it hides among them).
-- Why it must fail: the `runara:` tag prefix is runara's own; a script's tag with it is refused
-- before anything is sent.
-- expect: error tag 'runara:run-OTHER' is reserved
droplet.create { tags = { "runara:run-OTHER" }, size = "s-1vcpu-1gb", image = "ubuntu-22-04-x64", region = "nyc3" }
print("ESCAPED: a script set a runara run tag")
