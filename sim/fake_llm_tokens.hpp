// How the fake LLM server counts a prompt's tokens without a tokenizer (internal to sim).
//
// The fake has no model, so it counts as a byte-level BPE tokenizer (GPT-2, cl100k, Llama 3)
// counts common English: each word one token (a letter run of up to 8 bytes, one more per 8
// bytes beyond: rare long words split), a number one token per 3 digits (as Llama 3 and cl100k
// split them), each other mark one token, a single space before a word free (it is part of the
// word's token), each further run of spaces or newlines one token. So runara's synthetic prompts,
// whose words are single tokens for those tokenizers (load_job/prompt_pool.cpp), count exactly
// as the client asked, and a normal run's token-count checks agree; ordinary prose comes out
// near the usual 4 bytes a token. No BOS is added. Chat requests add 4 tokens a message (role and
// template), as a chat template does.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace runara::fake_llm {

// Tokens of `text` by the rule above.
int64_t count_text_tokens(std::string_view text);

// A request's prompt tokens: "prompt" (a string, a list of strings, or token ids, one each) or,
// for chat, "messages" (string or text-part contents, plus 4 a message). At least 1.
int64_t count_prompt_tokens(const nlohmann::json& request, bool chat);

// One hash per token of count_prompt_tokens's count (none for an empty prompt), of the token's
// text: equal prompts up to a point give equal hashes up to there (the prefix cache's key).
std::vector<uint64_t> prompt_token_hashes(const nlohmann::json& request, bool chat);

}  // namespace runara::fake_llm
