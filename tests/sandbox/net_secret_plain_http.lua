-- Attempt: the user bound the secret to a host and granted it, for https; the script sends it
-- there over plain http://, where anyone on the path reads it.
-- Why it must fail: over plain http a secret goes only to loopback and the run's own machines.
-- expect: error over plain http://
-- flags: --allow-host 198.51.100.7 --secret RUNARA_SANDBOX_SECRET@198.51.100.7
http_load.run{ url = "http://198.51.100.7/", requests = 1, api_key = runara.secret("RUNARA_SANDBOX_SECRET") }
print("ESCAPED: a secret was sent in clear text across a network")
