-- Attempt: crash the runtime with a 50,000-character droplet tag (std::regex recursion, as with
-- the name).
-- Why it must fail: tags are checked with a plain loop and DigitalOcean's 255-character limit.
-- expect: error at most 255 characters
droplet.create { tags = { string.rep("t", 50000) }, size = "s-1vcpu-1gb", image = "ubuntu-22-04-x64", region = "nyc3" }
print("ESCAPED: a 50,000-character tag was accepted")
