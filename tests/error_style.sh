#!/usr/bin/env bash
# The error-style ratchet (issue 38 item 2): engines report failures as Result<T> / Status
# (runtime/base/result.hpp); the two older styles, a `std::string& error` out-parameter (any
# non-const std::string& whose name ends in error, err or why) and a `throw`, may only shrink.
# This counts them in each folder's C++ (comments and string literals left out) outside the
# agreed places (docs/architecture.md, "Errors"), and fails when a count rises above the number
# recorded below.
#
# When a change removes some, lower the numbers below to what this script prints, in the same
# commit, so that they cannot come back. Never raise them: return Result/Status instead.
#
#   tests/error_style.sh [SOURCE_DIR]
set -uo pipefail
src=${1:-$(cd "$(dirname "$0")/.." && pwd)}

# Recorded counts: folder, out-parameters, throws (main at b594fb5 with runara.json, issue 38).
recorded="
runtime 67 66
bindings 1 0
cli 8 0
sim 7 22
include 3 0
"

# The agreed places for `throw`: a rethrow (`throw;`, after cleanup in a catch block: no new
# error path) anywhere, and the Lua heap's panic (runtime/guards/lua_heap.*), which must unwind
# past LuaJIT's at-panic handler, where returning is not allowed.
agreed_throw_files='^runtime/guards/lua_heap\.(cpp|hpp)$'

count() {  # count FOLDER: prints "out_params throws"
  local folder=$1
  (cd "$src" && find "$folder" -name '*.cpp' -o -name '*.hpp' | LC_ALL=C sort) | while IFS= read -r file; do
    [[ $file =~ $agreed_throw_files ]] && agreed=1 || agreed=0
    AGREED=$agreed perl -0777 -ne '
      # Comments, raw strings, string and character literals out, left to right.
      s{(//[^\n]*)|(/\*.*?\*/)|(R"([^(]*)\(.*?\)\4")|("(?:\\.|[^"\\\n])*")|(\x27(?:\\.|[^\x27\\\n])*\x27)}{defined $1 || defined $2 ? "" : "\"\""}gse;
      my $out = () = /(?<!const )(?<!const)\bstd::string\s*&\s*\w*(?:error|err|why)\b(?!\s*\()/g;
      my $throws = () = /\bthrow\b(?!\s*;)/g;
      $throws = 0 if $ENV{AGREED};
      print "$out $throws\n";
    ' "$src/$file"
  done | awk '{o += $1; t += $2} END {print o + 0, t + 0}'
}

failures=0
while read -r folder max_out max_throw; do
  [[ -z $folder ]] && continue
  read -r out throws < <(count "$folder")
  echo "$folder: $out std::string& error out-parameters (recorded $max_out), $throws throws (recorded $max_throw)"
  if (( out > max_out )); then
    echo "FAIL: $folder has $out std::string& error out-parameters, more than the $max_out recorded: return Result<T> or Status (runtime/base/result.hpp)"
    failures=$((failures + 1))
  fi
  if (( throws > max_throw )); then
    echo "FAIL: $folder has $throws throws outside the agreed places, more than the $max_throw recorded: return Result<T> or Status (docs/architecture.md, Errors)"
    failures=$((failures + 1))
  fi
  if (( out < max_out || throws < max_throw )); then
    echo "note: $folder is below its recorded counts: lower them in tests/error_style.sh to $out $throws"
  fi
done <<<"$recorded"
exit $((failures > 0))
