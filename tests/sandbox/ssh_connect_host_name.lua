-- Attempt: name a host by a name ("localhost") so that a grant for one address is bypassed by
-- whatever the name resolves to.
-- Why it must fail: ssh.connect takes numeric addresses only and checks the grant on them.
-- expect: error expected a numeric IP address
ssh.connect("localhost:22", { timeout = 1 })
print("ESCAPED: connected by host name")
