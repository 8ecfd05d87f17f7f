#!/usr/bin/env bash
# Installs the freshly built runara into a temporary prefix, builds examples/embed against it
# with find_package(runara), runs the host program and checks what it printed.
set -euo pipefail
build_dir=$1 source_dir=$2 cxx_flags=${3:-}
prefix=$(mktemp -d /tmp/runara-embed-XXXXXX)
trap 'rm -rf "$prefix"' EXIT
cmake --install "$build_dir" --prefix "$prefix/install" >/dev/null
cmake -S "$source_dir/examples/embed" -B "$prefix/build" -DCMAKE_PREFIX_PATH="$prefix/install" -DCMAKE_CXX_FLAGS="$cxx_flags" \
  -DCMAKE_EXE_LINKER_FLAGS="$cxx_flags" >/dev/null
cmake --build "$prefix/build" >/dev/null
out=$(LD_LIBRARY_PATH="$prefix/install/lib:$prefix/install/lib/x86_64-linux-gnu" "$prefix/build/embed_host")
echo "$out"
grep -q '^\[script\] hello, host$' <<<"$out"
grep -q '^\[script\] hello, embedder$' <<<"$out"  # waited on the loop in a task
# The host's key was registered as a secret: redacted in what the script prints, never shown.
grep -q '^\[script\] hello, reader (key <\*\*\*\*\*\*\*\*\*\*>)$' <<<"$out"
! grep -q 'k-3f9a61c2e7' <<<"$out"
grep -q '^\[log\] \[ *[0-9.]*\] greeter: teardown after 1 greeting(s)$' <<<"$out"
grep -q '^\[result\] answer = 42$' <<<"$out"
grep -q '^exit 0 $' <<<"$out"
echo "embed example: ok"
