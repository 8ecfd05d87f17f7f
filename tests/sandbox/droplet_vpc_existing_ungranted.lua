-- Attempt: put the script's machine in an existing VPC of the account (where a database or
-- internal service trusts its neighbours) by naming it: droplet.vpc{existing = NAME}.
-- Why it must fail: an account VPC is the user's to give, with --allow-vpc NAME; refused before
-- anything is sent.
-- cloud: fake
-- expect: error grant this one with --allow-vpc default-nyc3
droplet.vpc { region = "nyc3", existing = "default-nyc3" }
print("ESCAPED: a script joined an account VPC it was not given")
