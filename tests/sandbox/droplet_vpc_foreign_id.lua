-- Attempt: create the script's machine straight into an account VPC by its id (a UUID learned
-- elsewhere), skipping droplet.vpc and its grant.
-- Why it must fail: droplet.create takes only a VPC this run got from droplet.vpc.
-- cloud: fake
-- expect: error is not a VPC of this run
droplet.create { size = "s-1vcpu-1gb", image = "ubuntu-22-04-x64", region = "nyc3", vpc = "5a4e1c2b-0d3f-4e5a-8b6c-7d8e9f0a1b2c" }
print("ESCAPED: a script created a machine in a VPC it was not given")
