-- Attempt: log into a machine the user never named (here this machine's own sshd), pointing
-- the user's keys at it.
-- Why it must fail: ssh.connect reaches only the run's own droplets and hosts granted with
-- --allow-host; the check is made before any connection or key is touched.
-- expect: error is not granted
ssh.connect("127.0.0.1:22", { timeout = 1 })
print("ESCAPED: connected to a host that was not granted")
