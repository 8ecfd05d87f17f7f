-- Attempt: aim a load at "127.0.0.1:1/x" with --allow-host 127.0.0.1:1, leaving the scheme out
-- so that libcurl guesses one (and with it the port), while the policy assumed another; a secret
-- API key would then go out in clear text to a port the grant did not name.
-- Why it must fail: a URL without an explicit http:// or https:// is refused before anything is
-- sent.
-- expect: error option 'url' must start with http:// or https://
-- flags: --allow-host 127.0.0.1:1 --secret RUNARA_SANDBOX_SECRET
http_load.run{ url = "127.0.0.1:1/x", requests = 1, api_key = runara.secret("RUNARA_SANDBOX_SECRET") }
print("ESCAPED: a URL without a scheme was accepted")
