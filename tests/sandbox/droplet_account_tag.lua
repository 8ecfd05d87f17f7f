-- Attempt: tag the script's machine `db-clients`, a tag the account's managed database's cloud
-- firewall admits (`sources.tags`), so the machine reaches the database; or any tag that
-- tag-based automation of the account acts on.
-- Why it must fail: a script sets only its own `runara-user:NAME` tags and those granted with
-- --allow-tag NAME; the error names the tag and both ways.
-- expect: error tag 'db-clients' is not the run's to set
droplet.create { tags = { "runara-user:web", "db-clients" }, size = "s-1vcpu-1gb", image = "ubuntu-22-04-x64",
                 region = "nyc3" }
print("ESCAPED: a script tagged its machine with an account tag")
