-- Attempt: tag a droplet `Runara:run-OTHER` (mixed case), the same tag as runara:run-OTHER at
-- DigitalOcean, to hide among another run's machines.
-- Why it must fail: the `runara:` prefix is compared case-insensitively.
-- expect: error tag 'Runara:run-OTHER' is reserved
droplet.create { tags = { "Runara:run-OTHER" }, size = "s-1vcpu-1gb", image = "ubuntu-22-04-x64", region = "nyc3" }
print("ESCAPED: a script set a runara run tag in mixed case")
