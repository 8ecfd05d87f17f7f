#!/bin/sh
# runara starts without libcurl, libssh2, OpenSSL's libcrypto (runtime/*/*_lazy.cpp) and libedit
# (cli/libedit_lazy.cpp) and loads each when a run or the REPL first uses it; nor does it link
# cpp-httplib (the fake DigitalOcean API has its own server). Each cost every start time.
#   lazy_libraries.sh RUNARA_BINARY LIBRUNARA
set -u
runara=$1 lib=$2
fail() { echo "FAIL: $*"; exit 1; }

readelf -d "$runara" | grep NEEDED | grep -q libedit && fail "$runara links libedit (the REPL opens it: cli/libedit_lazy.cpp)"
for f in "$runara" "$lib"; do
  for l in libcurl libssh2 libcrypto libssl libcpp-httplib; do
    readelf -d "$f" | grep NEEDED | grep -q "$l" && fail "$f links $l (readelf -d shows it NEEDED)"
  done
done

loaded() { LD_DEBUG=files "$runara" -e "$1" 2>&1 | grep -cE "file=(libcurl|libssh2|libcrypto|libedit)[.]so"; }
[ "$(loaded '')" = 0 ] || fail "runara -e '' loaded libcurl, libssh2, libcrypto or libedit"
# http_load parses its url with libcurl's URL parser: the first use loads the library, and works.
out=$(LD_DEBUG=files "$runara" -e "local ok, err = pcall(http_load.run, { url = 'https://[::1' }); print(err)" 2>&1)
echo "$out" | grep -q 'file=libcurl.so' || fail "a url parse did not load libcurl: $out"
echo "$out" | grep -q "not a valid URL (libcurl: " || fail "the url error is not libcurl's parse: $out"
echo "ok"
