// vLLM's /tokenize, asked before an OpenAI-API load's first request: does the server count a
// prompt's tokens as the client does? The results' other token check (load/report.cpp) compares
// each request's usage.prompt_tokens after the fact, which includes what the server adds (BOS, the
// chat template); this one asks the server's tokenizer about the prompt's text alone, which is
// exactly what the client counts (bpe_tokenizer.hpp: no post-processor, no BOS).
//
// What is sent: for up to kTokenizePrompts prompts of the pool, spread evenly over it (the same
// ones every run), `POST <server root>/tokenize` (openai_url.hpp) with
// {"model": M, "prompt": P, "add_special_tokens": false} — vLLM's TokenizeCompletionRequest, for
// the chat endpoint too (its messages form would add the template's tokens) — and the load's own
// headers (its API key too), all at once. Each connection is judged by the load's target policy,
// secrets' rules included, as the load's own are; no proxy, no redirect, no reuse. Each answer
// has a short timeout and a size limit (64 KiB + 64 bytes a client token: nine times what vLLM's
// `tokens` list takes for an honest count), and is parsed off the loop with json_limits (its
// document estimated first and charged to the run's --max-memory while it exists). Its `count`
// is the server's; the sums over the prompts are compared, and more than 1 % apart is "differ".
// A prompt without a usable answer (404/405: the server has no /tokenize; a timeout, a refused
// connection, malformed or oversized JSON) makes the whole check "not run", saying why.
//
// Contract: made, started and destroyed on the loop's thread. `done` runs there once, at the
// latest after the timeout plus the parse (possibly from inside start(), when there is nothing
// to send), and never after the check is destroyed, which cancels what is in flight. The
// `redact` hook masks the server's text (and transport errors) in a `why`; the URL in the result
// is the script's own and is not. The pure functions below are the check's rules, tested alone.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "load/spec.hpp"
#include "load_job/prompt_pool.hpp"

typedef struct uv_loop_s uv_loop_t;

namespace runara {

inline constexpr std::size_t kTokenizePrompts = 8;
// Longer prompts are not asked about: their answer would list every token (about 7 bytes each).
inline constexpr int kTokenizeMaxPromptTokens = 65536;
inline constexpr double kTokenizeTimeoutS = 5;      // or the load's own timeout, when shorter
inline constexpr double kTokenizeTolerancePct = 1;  // as the usage check's

// The pool indices asked about: up to kTokenizePrompts spread evenly over it (i * size / n),
// leaving out prompts the client counts longer than kTokenizeMaxPromptTokens.
std::vector<std::size_t> tokenize_sample(const PromptPool& pool);

// {"model": M, "prompt": P, "add_special_tokens": false}
std::string tokenize_body(const std::string& model, std::string_view prompt);

// The largest answer accepted for a prompt of `client_tokens`; its parsed document may be 8 times that.
std::size_t tokenize_answer_limit(int client_tokens);

// The server's count in one complete answer: HTTP 200 and a JSON object (at most `max_tree_bytes`
// once parsed, 0: unbounded) whose `count` is a whole number from 0 to 2^40 and whose `tokens`,
// when it is there, is a list of that many. Otherwise nullopt and `why` says what was wrong (404 and 405
// without a message of the server's own: it does not offer /tokenize); `why` may quote the
// server's text, at most 200 bytes of it made printable.
std::optional<std::int64_t> tokenize_answer_count(long status, std::string_view body, std::size_t max_tree_bytes,
                                                  std::string& why);

// token_count_check.tokenize of a check that ran: { status = "ok" | "differ", prompts,
// client_tokens, server_tokens, difference_pct, ok, tolerance_pct }.
nlohmann::json tokenize_verdict(std::size_t prompts, std::int64_t client_tokens, std::int64_t server_tokens);
// ... and of one that could not: { status = "not run", why }.
nlohmann::json tokenize_not_run(const std::string& why);

// Why a load cannot be checked at all, "" when it can: not an OpenAI-API load, a load the agent
// runs on another machine (`remote`; its URL is that machine's view), no prompts, or a URL whose
// path does not say where the server's root is.
std::string tokenize_unavailable(const LoadSpec& spec, const PromptPool* pool, bool remote);

class TokenizeCheck {
 public:
  using Redact = std::function<std::string(const std::string&)>;
  using Done = std::function<void(nlohmann::json result)>;  // token_count_check.tokenize, with `url`

  // `spec`: the load (its first point: URL, headers, policy, timeout, model, memory budget), for
  // which tokenize_unavailable said "". `pool`: its prompts, with the client's counts.
  TokenizeCheck(uv_loop_t* loop, const LoadSpec& spec, std::shared_ptr<const PromptPool> pool, Redact redact);
  ~TokenizeCheck();
  TokenizeCheck(const TokenizeCheck&) = delete;
  TokenizeCheck& operator=(const TokenizeCheck&) = delete;

  void start(Done done);

  struct Impl;

 private:
  std::shared_ptr<Impl> impl_;
};

}  // namespace runara
