-- Attempt: read a file next to the script's folder with a ../ path (the harness puts
-- outside/secret.txt, holding the secret value, beside the script's folder).
-- Why it must fail: runara.read_file resolves the path and allows only the script's folder,
-- the output folder and --allow-read paths.
-- expect: error is not allowed
local data = runara.read_file("../outside/secret.txt")
print("ESCAPED: read ../outside/secret.txt: " .. data:reverse())
