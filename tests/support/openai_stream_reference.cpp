#include "openai_stream_reference.hpp"

#include <cstdint>
#include <limits>

#include <nlohmann/json.hpp>

#include "base/json_limits.hpp"

namespace runara {

namespace {

void set_server_error(OpenAiStreamEvent& out, std::string message, std::string type, int64_t code) {
  out.clear();
  out.kind = OpenAiEventKind::kError;
  out.error_kind = kServerError;
  out.error_message = std::move(message);
  out.error_type = std::move(type);
  out.error_code = code;
}

void set_malformed(OpenAiStreamEvent& out, std::string message) {
  out.clear();
  out.kind = OpenAiEventKind::kError;
  out.error_kind = kMalformedSse;
  out.error_message = std::move(message);
}

}  // namespace

OpenAiEventKind interpret_openai_json_reference(std::string_view json, OpenAiStreamEvent& out,
                                                std::string* text_out) {
  out.clear();
  // nlohmann treats a NUL byte as the end of the input and skips a leading
  // UTF-8 BOM; neither is valid JSON text, so both are rejected up front.
  if (json.find('\0') != std::string_view::npos ||
      (!json.empty() && static_cast<unsigned char>(json[0]) == 0xEF)) {
    set_malformed(out, "NUL byte or BOM");
    return out.kind;
  }
  std::string error;
  auto parsed = parse_json_limited(json, error);
  if (!parsed) {
    set_malformed(out, error);
    return out.kind;
  }
  const nlohmann::json& j = *parsed;
  if (!j.is_object()) {
    set_malformed(out, "not a JSON object");
    return out.kind;
  }
  auto get_str = [](const nlohmann::json& o, const char* k) -> const std::string* {
    auto it = o.find(k);
    if (it != o.end() && it->is_string()) return &it->get_ref<const std::string&>();
    return nullptr;
  };
  auto get_int = [](const nlohmann::json& o, const char* k) -> int64_t {
    auto it = o.find(k);
    if (it == o.end() || !it->is_number_integer()) return -1;
    if (it->is_number_unsigned()) {
      uint64_t u = it->get<uint64_t>();
      return u <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max())
                 ? static_cast<int64_t>(u) : -1;
    }
    return it->get<int64_t>();
  };
  auto get_code = [](const nlohmann::json& o) -> int64_t {
    auto it = o.find("code");
    if (it == o.end() || !it->is_number_integer()) return 0;
    if (it->is_number_unsigned()) {
      uint64_t u = it->get<uint64_t>();
      return u <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max())
                 ? static_cast<int64_t>(u) : 0;
    }
    return it->get<int64_t>();
  };
  auto s_or_empty = [](const std::string* s) { return s ? *s : std::string(); };

  auto err = j.find("error");
  if (err != j.end() && (err->is_object() || err->is_string())) {
    if (err->is_string()) {
      set_server_error(out, err->get<std::string>(), "", 0);
    } else {
      set_server_error(out, s_or_empty(get_str(*err, "message")),
                       s_or_empty(get_str(*err, "type")), get_code(*err));
    }
    return out.kind;
  }
  if (const std::string* obj = get_str(j, "object"); obj && *obj == "error") {
    set_server_error(out, s_or_empty(get_str(j, "message")), s_or_empty(get_str(j, "type")),
                     get_code(j));
    return out.kind;
  }
  auto ch = j.find("choices");
  if (ch != j.end() && ch->is_array()) {
    out.choices = static_cast<uint32_t>(ch->size());
    for (const auto& c : *ch) {
      if (!c.is_object()) continue;
      const std::string* parts[7] = {get_str(c, "text"), nullptr, nullptr, nullptr,
                                     nullptr, nullptr, nullptr};
      auto d = c.find("delta");
      if (d != c.end() && d->is_object()) {
        parts[1] = get_str(*d, "reasoning_content");
        parts[2] = get_str(*d, "reasoning");
        parts[3] = get_str(*d, "content");
      }
      auto m = c.find("message");
      if (m != c.end() && m->is_object()) {
        parts[4] = get_str(*m, "reasoning_content");
        parts[5] = get_str(*m, "reasoning");
        parts[6] = get_str(*m, "content");
      }
      bool token = false;
      for (int i = 0; i < 7; ++i) {
        if (!parts[i]) continue;
        if (!parts[i]->empty()) token = true;
        out.text_bytes += parts[i]->size();
        if (i == 1 || i == 2 || i == 4 || i == 5) out.reasoning_bytes += parts[i]->size();
        if (text_out) text_out->append(*parts[i]);
      }
      if (token) ++out.token_choices;
      if (const std::string* f = get_str(c, "finish_reason")) out.finish_reason = *f;
    }
  }
  auto us = j.find("usage");
  if (us != j.end() && us->is_object()) {
    out.has_usage = true;
    out.prompt_tokens = get_int(*us, "prompt_tokens");
    out.completion_tokens = get_int(*us, "completion_tokens");
    out.total_tokens = get_int(*us, "total_tokens");
  }
  out.has_token = out.token_choices > 0;
  return out.kind;
}

}  // namespace runara
