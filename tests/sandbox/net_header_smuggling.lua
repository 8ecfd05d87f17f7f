-- Attempt: set Transfer-Encoding (and Host, Content-Length, Connection) on a load's requests to
-- smuggle a second request past the granted server, or reach another virtual host behind it.
-- Why it must fail: runara sets these headers itself; a script setting any of them, in any
-- case, is refused before anything is sent.
-- expect: error may not be set by a script
-- flags: --allow-host 127.0.0.1:1
for _, name in ipairs({ "Host", "content-length", "CONNECTION" }) do
  local ok = pcall(http_load.run, { url = "http://127.0.0.1:1/", requests = 1, headers = { [name] = "x" } })
  if ok then print("ESCAPED: header " .. name .. " was accepted") end
end
http_load.run{ url = "http://127.0.0.1:1/", method = "POST", body = "0\r\n\r\nGET /admin HTTP/1.1\r\n\r\n",
               requests = 1, headers = { ["Transfer-Encoding"] = "chunked" } }
print("ESCAPED: Transfer-Encoding was accepted")
