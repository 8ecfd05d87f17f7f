#!/usr/bin/env bash
# The build's direction, checked from the outside: what each component may and may not include
# (cmake/components.cmake, docs/architecture.md). Each line below preprocesses one #include with
# the component's own include path and expects it, and everything it includes, to be found, or to
# be "No such file": a header of a component above or beside, or Lua's headers in an engine.
# (Preprocessing, not -fsyntax-only: whether a header is reachable is the preprocessor's answer,
# in a seventh of the time.)
#
#   tests/layers.sh BUILD_DIR CXX
set -uo pipefail
build=$(cd "$1" && pwd)
cxx=${2:-c++}
failures=0
# Quoted includes of a file read from stdin are looked for in the current folder first: compile
# from an empty one, so that only the component's include path can find a header.
empty=$(mktemp -d)
trap 'rm -rf "$empty"' EXIT
cd "$empty" || exit 1

check() {  # check COMPONENT can|cannot HEADER
  local component=$1 verdict=$2 header=$3 path_file=$build/include-views/$1.include-path flags=() out
  [[ -f $path_file ]] || { echo "no include path for $component ($path_file)"; failures=$((failures + 1)); return; }
  while IFS= read -r dir; do [[ -n $dir ]] && flags+=("-I$dir"); done <"$path_file"
  out=$(printf '#include "%s"\n' "$header" | "$cxx" -std=c++20 -E -o /dev/null "${flags[@]}" -x c++ - 2>&1)
  local rc=$?
  if [[ $verdict == can && $rc -ne 0 ]]; then
    echo "FAIL: $component should include $header:"; echo "$out" | head -5; failures=$((failures + 1))
  elif [[ $verdict == cannot && ( $rc -eq 0 || $out != *"No such file"* ) ]]; then
    echo "FAIL: $component must not see $header (rc $rc)"; echo "$out" | head -5; failures=$((failures + 1))
  else
    echo "ok: $component $verdict include $header"
  fi
}

# base: nothing above it
check runara_base can base/json_limits.hpp
check runara_base cannot net/target_policy.hpp
check runara_base cannot run/state.hpp
# engines: what they stand on, never the core, the primitives, the simulator or Lua
check runara_load can load/engine.hpp
check runara_load can net/target_policy.hpp
check runara_load can http/openai_stream.hpp
check runara_load cannot load_job/job.hpp
check runara_load cannot curl/http_client.hpp
check runara_load cannot run/state.hpp
check runara_load cannot script/args.hpp
check runara_load cannot lua.hpp
check runara_load_job can curl/http_client.hpp
check runara_load_job cannot ssh/session.hpp
check runara_cloud can curl/http_client.hpp
check runara_cloud cannot guards/watchdog.hpp
check runara_cloud cannot load/engine.hpp
check runara_ssh cannot cloud/ledger.hpp
check runara_gpu cannot lua.hpp
check runara_gpu cannot ssh/session.hpp
check runara_metrics cannot load/engine.hpp
# the run core: Lua, the guards, the base; no engine, primitive or simulator
check runara_run_core can run/state.hpp
check runara_run_core can lua.hpp
check runara_run_core cannot load/engine.hpp
check runara_run_core cannot cloud/ledger.hpp
check runara_run_core cannot bindings/builtins.hpp
check runara_run_core cannot sim/sim_cloud.hpp
# the primitives: the core and every engine, not the simulator
check runara_primitives can load_job/job.hpp
check runara_primitives can script/args.hpp
check runara_primitives cannot sim/fake_llm_server.hpp

if ((failures > 0)); then echo "$failures layer check(s) failed"; exit 1; fi
echo "all layer checks passed"
