#!/usr/bin/env bash
# runara bench and vLLM's own client on the same server and flags: both TTFTs side by side.
#
#   VLLM_BENCH_DIR=DIR bench/vllm_client.sh [RUNARA]   (default: build/runara; builds nothing)
#
# DIR holds vLLM's benchmark_serving.py and backend_request_func.py (as vendored in, e.g.,
# SemiAnalysisAI/InferenceX utils/bench_serving/; nothing of it is in this repository). It runs
# with Debian's python3-aiohttp, python3-numpy and python3-tqdm; transformers and huggingface_hub
# (not in Debian) are replaced by a whitespace tokenizer made in a temporary folder, so its prompts
# are words, not a model's tokens: the server's timing does not depend on them.
#
# Serves `runara serve-fake-llm --ttft-ms $TTFT_MS --itl-ms $ITL_MS --output-tokens $TOKENS`,
# then runs vLLM's client and `runara bench` with `--request-rate $RATE --max-concurrency $CAP
# -n $N`, input and output $TOKENS tokens, and prints mean/median/P99 TTFT and mean E2EL of each
# and runara's from-schedule TTFT. Environment: RATE (20), CAP (32), N (200), TTFT_MS (80),
# ITL_MS (20), TOKENS (128), PORT (18437), PYTHON (/usr/bin/python3).
set -euo pipefail

RUNARA=${1:-build/runara}
: "${VLLM_BENCH_DIR:?give VLLM_BENCH_DIR, the folder holding benchmark_serving.py of vLLM}"
RATE=${RATE:-20} CAP=${CAP:-32} N=${N:-200} TTFT_MS=${TTFT_MS:-80} ITL_MS=${ITL_MS:-20} TOKENS=${TOKENS:-128}
PORT=${PORT:-18437} PYTHON=${PYTHON:-/usr/bin/python3}
work=$(mktemp -d)
server=
cleanup() { [ -n "$server" ] && kill "$server" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT

mkdir -p "$work/stubs/transformers" "$work/stubs/huggingface_hub" "$work/tok" "$work/vllm"
cat > "$work/stubs/transformers/__init__.py" <<'PY'
class _Encoded:
    def __init__(self, ids):
        self.input_ids = ids
class PreTrainedTokenizerBase:
    vocab_size = 1000
    def encode(self, text, add_special_tokens=False):
        return [int(w[1:]) % self.vocab_size if w[:1] == "w" and w[1:].isdigit() else 0 for w in text.split()]
    def decode(self, ids):
        return " ".join("w%d" % int(i) for i in ids)
    def __call__(self, text, add_special_tokens=False):
        return _Encoded(self.encode(text))
class PreTrainedTokenizer(PreTrainedTokenizerBase):
    pass
class PreTrainedTokenizerFast(PreTrainedTokenizerBase):
    pass
class AutoTokenizer:
    @staticmethod
    def from_pretrained(*args, **kwargs):
        return PreTrainedTokenizerFast()
PY
: > "$work/stubs/huggingface_hub/__init__.py"
echo "HF_HUB_OFFLINE = True" > "$work/stubs/huggingface_hub/constants.py"

"$RUNARA" serve-fake-llm --port "$PORT" --ttft-ms "$TTFT_MS" --itl-ms "$ITL_MS" --output-tokens "$TOKENS" >/dev/null 2>&1 &
server=$!
sleep 1
url=http://127.0.0.1:$PORT

PYTHONPATH="$work/stubs" "$PYTHON" "$VLLM_BENCH_DIR/benchmark_serving.py" --backend vllm --base-url "$url" \
  --endpoint /v1/completions --model fake-model --tokenizer "$work/tok" --dataset-name random \
  --random-input-len "$TOKENS" --random-output-len "$TOKENS" --random-range-ratio 1.0 --num-prompts "$N" \
  --request-rate "$RATE" --max-concurrency "$CAP" --ignore-eos --percentile-metrics ttft,tpot,itl,e2el \
  --metric-percentiles 50,99 --save-result --result-dir "$work/vllm" >"$work/vllm.log" 2>&1
"$RUNARA" bench "$url" --model fake-model --request-rate "$RATE" --max-concurrency "$CAP" -n "$N" \
  --input-len "$TOKENS" --output-len "$TOKENS" --metric-percentiles 50,99 --quiet --out "$work/runara" >/dev/null 2>&1

"$PYTHON" - "$work/vllm"/*.json "$work/runara/bench/results.json" <<'PY'
import json, sys
v, r = (json.load(open(p)) for p in sys.argv[1:3])
print(f"{'':26s} {'vLLM client':>12s} {'runara':>12s}")
for key in ("mean_ttft_ms", "median_ttft_ms", "p99_ttft_ms", "mean_e2el_ms", "mean_itl_ms", "request_throughput"):
    print(f"{key:26s} {v[key]:12.2f} {r[key]:12.2f}")
print(f"{'mean_ttft_from_schedule_ms':26s} {'-':>12s} {r['mean_ttft_from_schedule_ms']:12.2f}")
print(f"{'mean_queue_ms':26s} {'-':>12s} {r['mean_queue_ms']:12.2f}")
PY
