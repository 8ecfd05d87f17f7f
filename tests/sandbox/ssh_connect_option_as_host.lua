-- Attempt: smuggle an OpenSSH option through the host string ("-oProxyCommand=...", the trick
-- behind CVE-2017-1000117 in tools that pass hosts to ssh), or a name a resolver reads oddly.
-- Why it must fail: runara never runs ssh(1), and a host string must be an IP address or a
-- plain DNS name (letters, digits, '-' and '.'), checked before any grant or lookup.
-- expect: error expected an IP address or a host name
ssh.connect("-oProxyCommand=touch /tmp/pwned", { timeout = 1 })
print("ESCAPED: an option was taken for a host")
