-- Attempt: from a simulated machine under --sim, fill /tmp, /dev/shm and the machine's home past
-- their sizes, fork 700 processes, and read the kernel's keyring list and log, hoping to take this
-- computer's memory, disk and process table or see what namespaces do not separate.
-- Why it must fail: the box's folders are tmpfs sized from --max-memory, its processes capped at
-- 512 (as nobody when runara is root), /proc/keys empty and syslog refused (sim/box_limits.hpp,
-- sim/box_seccomp.hpp).
-- expect: safe
-- flags: --sim --max-memory 64M
local d = droplet.create{ name = "bomb", size = "gpu-mi300x1-192gb", image = "gpu-amd-base", region = "atl1" }
local s = ssh.connect(d, { timeout = 10 })
local function got(command)
  return s:exec("(" .. command .. ") >/dev/null 2>&1 && echo yes || echo no", { quiet = true }).stdout:find("yes") ~= nil
end
local escaped = false
for _, folder in ipairs{ "/tmp", "/dev/shm", "$HOME" } do
  if got("for i in 1 2 3; do head -c 40M /dev/zero > " .. folder .. "/runara-fill-$i || exit 1; done") then
    print("ESCAPED: wrote 120 MiB to " .. folder)
    escaped = true
  end
  -- Its own names only: /tmp also holds the mount points of runara and its shims (at their paths).
  s:exec("rm -f " .. folder .. "/runara-fill-*", { quiet = true })
end
if got("grep -q . /proc/keys") then print("ESCAPED: /proc/keys lists this computer's keyrings") escaped = true end
if got("dmesg") then print("ESCAPED: read the kernel log") escaped = true end
local forked = s:exec([[perl -e 'my @k; for (1 .. 700) { my $p = fork; last unless defined $p; if (!$p) { sleep 20; exit 0 } push @k, $p } print scalar(@k); kill 9, @k; waitpid($_, 0) for @k']], { quiet = true }).stdout
if tonumber(forked) == nil or tonumber(forked) >= 512 then
  print("ESCAPED: forked " .. forked .. " processes")
  escaped = true
end
if not escaped then print("SAFE") end
