-- Attempt: read the cloud metadata service (which hands out credentials) through metrics.scrape,
-- spelling the address in decimal so a string check on the URL would miss it.
-- Why it must fail: the address is judged on the connection itself, by http_load's target policy.
-- expect: error (cloud metadata)
metrics.scrape("http://2852039166/metadata/v1/")
