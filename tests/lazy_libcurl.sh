#!/bin/sh
# runara starts without libcurl (runtime/net/curl_lazy.cpp) and loads it when a run first uses it.
#   lazy_libcurl.sh RUNARA_BINARY LIBRUNARA
set -u
runara=$1 lib=$2
fail() { echo "FAIL: $*"; exit 1; }

for f in "$runara" "$lib"; do
  readelf -d "$f" | grep NEEDED | grep -q libcurl && fail "$f links libcurl (readelf -d shows it NEEDED)"
done

loaded() { LD_DEBUG=files "$runara" -e "$1" 2>&1 | grep -c 'file=libcurl.so'; }
[ "$(loaded '')" = 0 ] || fail "runara -e '' loaded libcurl"
# http_load parses its url with libcurl's URL parser: the first use loads the library, and works.
out=$(LD_DEBUG=files "$runara" -e "local ok, err = pcall(http_load.run, { url = 'https://[::1' }); print(err)" 2>&1)
echo "$out" | grep -q 'file=libcurl.so' || fail "a url parse did not load libcurl: $out"
echo "$out" | grep -q "not a valid URL (libcurl: " || fail "the url error is not libcurl's parse: $out"
echo "ok"
