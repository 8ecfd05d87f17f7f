-- Attempt: require a module whose file in the script's folder is a symlink pointing outside it
-- (the harness creates linkmod.lua -> ../outside/evil.lua).
-- Why it must fail: the module file must resolve (symlinks included) inside the folder it was
-- found in; otherwise it is treated as not found.
-- expect: error module 'linkmod' not found
require("linkmod")
print("ESCAPED: require followed a symlink out of the script's folder")
