// `runara serve-fake-llm`: the fake OpenAI-compatible streaming LLM server (sim/) as a
// standalone process, for aiming load generators (runara's or another tool's) at a "model" with
// a chosen time to first token, inter-token latency, lengths and injected failures, without a GPU.
#pragma once

namespace runara::cli {

int serve_fake_llm(int argc, char** argv);

}  // namespace runara::cli
