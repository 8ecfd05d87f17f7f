-- Attempt: name a host by a name ("localhost") so that a grant for one address (or none) is
-- bypassed by whatever the name resolves to.
-- Why it must fail: the grant is checked on the target as written, before anything is looked
-- up: a name needs --allow-host for that very name (and port), which this run was not given.
-- expect: error host localhost:22 is not granted
ssh.connect("localhost:22", { timeout = 1 })
print("ESCAPED: connected by host name")
