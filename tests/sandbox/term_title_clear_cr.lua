-- Attempt: take over the user's terminal: set its title, clear the screen, move the cursor home,
-- and overwrite a printed line with CR (hiding what the run really did), from print and
-- runara.log.
-- Why it must fail: ESC, BEL, CR and backspace are written as cat -v shows them (^[ ^G ^M ^H),
-- so nothing is interpreted and nothing is overwritten; the corpus checks no raw byte is left.
-- expect: safe
print("\27]0;runara: all machines destroyed\7title")
print("\27[2J\27[Hcleared")
print("machine still running\rall machines destroyed   ")
print("erased\8\8\8\8\8\8      ")
runara.log("\27[2J\27[3J\27c reset")
print("SAFE")
