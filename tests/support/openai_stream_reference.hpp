// The slow oracle the OpenAI stream interpreter (runtime/http/openai_stream) is tested and fuzzed
// against: the same interpretation done on an nlohmann::json tree, written independently of the
// scanner. On a JSON syntax error, error_message holds nlohmann's message.
#pragma once

#include <string>
#include <string_view>

#include "http/openai_stream.hpp"

namespace runara {

OpenAiEventKind interpret_openai_json_reference(std::string_view json, OpenAiStreamEvent& out,
                                                std::string* text_out = nullptr);

}  // namespace runara
