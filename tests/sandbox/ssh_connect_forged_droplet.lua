-- Attempt: pass a hand-made table that looks like a droplet of this run, so that ssh.connect
-- logs in with the run's key (or the user's) to an address the user never granted.
-- Why it must fail: a droplet target counts only if the run itself created a machine at that
-- address (Context::machine); a table's fields prove nothing.
-- expect: error is not a droplet this run created
ssh.connect({ ip = "127.0.0.1", name = "forged", id = 1 }, { timeout = 1 })
print("ESCAPED: connected through a forged droplet")
