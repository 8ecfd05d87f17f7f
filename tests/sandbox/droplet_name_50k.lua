-- Attempt: crash the runtime with a 50,000-character droplet name: matching it with std::regex
-- recursed once per character and overflowed the stack (SIGSEGV), ending the run without its
-- error path.
-- Why it must fail: names are checked with a plain loop and DigitalOcean's 255-character limit,
-- before any token or API is needed; the error quotes only a prefix of the name.
-- expect: error is too long
droplet.create { name = string.rep("a", 50000), size = "s-1vcpu-1gb", image = "ubuntu-22-04-x64", region = "nyc3" }
print("ESCAPED: a 50,000-character name was accepted")
