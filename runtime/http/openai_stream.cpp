#include "http/openai_stream.hpp"
#include "base/text.hpp"

#include <string>

#include "http/json_scan.hpp"
#include "http/sse_parser.hpp"
#include "base/json_limits.hpp"

namespace runara {

void OpenAiStreamEvent::clear() {
  kind = OpenAiEventKind::kChunk;
  has_token = false;
  has_usage = false;
  choices = 0;
  token_choices = 0;
  text_bytes = 0;
  reasoning_bytes = 0;
  finish_reason.clear();
  prompt_tokens = completion_tokens = total_tokens = -1;
  error_kind.clear();
  error_message.clear();
  error_type.clear();
  error_code = 0;
}

namespace {

// Content fields of one "delta" or "message" object.
struct MsgSlots {
  JsonStr content, reasoning_content, reasoning;
};

// Picks the OpenAI fields out of one JSON object as the scanner walks it ("last duplicate key
// wins", like nlohmann::json); everything else is only validated.
class OpenAiFields {
 public:
  OpenAiFields(std::string_view text, OpenAiStreamEvent& out, std::string* text_out)
      : scan_(text, kMaxJsonDepth), out_(out), text_out_(text_out), text_out_base_(text_out ? text_out->size() : 0) {}

  // Returns false on a syntax error or a non-object top level.
  bool run() {
    return scan_.top_object([&](const JsonStr& key) { return top_member(key); });
  }

  std::size_t offset() const { return scan_.offset(); }
  bool too_deep() const { return scan_.too_deep(); }
  void rollback_text() {
    if (text_out_) text_out_->resize(text_out_base_);
  }

  // What the top level held, for the caller to assemble the result.
  bool error_present = false;
  JsonStr err_message, err_type;
  bool err_code_set = false;
  int64_t err_code = 0;
  bool object_is_error = false;
  JsonStr top_message, top_type;
  bool top_code_set = false;
  int64_t top_code = 0;

 private:
  bool msg(MsgSlots& m) {
    return scan_.object([&](const JsonStr& key) {
      if (json_str_eq(key, "content")) return scan_.string_or_other(m.content);
      if (json_str_eq(key, "reasoning_content")) return scan_.string_or_other(m.reasoning_content);
      if (json_str_eq(key, "reasoning")) return scan_.string_or_other(m.reasoning);
      return scan_.skip_value();
    });
  }

  bool choice() {
    JsonStr text, finish;
    MsgSlots delta, message;
    const bool ok = scan_.object([&](const JsonStr& key) {
      if (json_str_eq(key, "text")) return scan_.string_or_other(text);
      if (json_str_eq(key, "delta")) {
        delta = MsgSlots{};
        return scan_.peek() == '{' ? msg(delta) : scan_.skip_value();
      }
      if (json_str_eq(key, "message")) {
        message = MsgSlots{};
        return scan_.peek() == '{' ? msg(message) : scan_.skip_value();
      }
      if (json_str_eq(key, "finish_reason")) return scan_.string_or_other(finish);
      return scan_.skip_value();
    });
    if (!ok) return false;
    const JsonStr* order[] = {&text,
                              &delta.reasoning_content, &delta.reasoning, &delta.content,
                              &message.reasoning_content, &message.reasoning, &message.content};
    bool token = false;
    for (size_t i = 0; i < std::size(order); ++i) {
      const JsonStr& s = *order[i];
      if (!s.present) continue;
      if (s.raw_len > 0) token = true;
      out_.text_bytes += s.decoded_len;
      if (i == 1 || i == 2 || i == 4 || i == 5) out_.reasoning_bytes += s.decoded_len;
      if (text_out_) json_decode_into(s, *text_out_);
    }
    if (token) ++out_.token_choices;
    if (finish.present) {
      out_.finish_reason.clear();
      json_decode_into(finish, out_.finish_reason);
    }
    return true;
  }

  bool choices() {
    return scan_.array([&] {
      ++out_.choices;
      return scan_.peek() == '{' ? choice() : scan_.skip_value();
    });
  }

  bool usage() {
    out_.has_usage = true;
    return scan_.object([&](const JsonStr& key) {
      int64_t* dst = nullptr;
      if (json_str_eq(key, "prompt_tokens")) dst = &out_.prompt_tokens;
      else if (json_str_eq(key, "completion_tokens")) dst = &out_.completion_tokens;
      else if (json_str_eq(key, "total_tokens")) dst = &out_.total_tokens;
      if (!dst) return scan_.skip_value();
      bool set = false;
      int64_t v = 0;
      if (!scan_.int_or_other(set, v)) return false;
      *dst = set ? v : -1;
      return true;
    });
  }

  bool error_object() {
    return scan_.object([&](const JsonStr& key) {
      if (json_str_eq(key, "message")) return scan_.string_or_other(err_message);
      if (json_str_eq(key, "type")) return scan_.string_or_other(err_type);
      if (json_str_eq(key, "code")) return scan_.int_or_other(err_code_set, err_code);
      return scan_.skip_value();
    });
  }

  bool top_member(const JsonStr& key) {
    const unsigned char c = scan_.peek();
    if (json_str_eq(key, "choices")) {
      out_.choices = out_.token_choices = 0;
      out_.text_bytes = out_.reasoning_bytes = 0;
      out_.finish_reason.clear();
      rollback_text();
      return c == '[' ? choices() : scan_.skip_value();
    }
    if (json_str_eq(key, "usage")) {
      out_.has_usage = false;
      out_.prompt_tokens = out_.completion_tokens = out_.total_tokens = -1;
      return c == '{' ? usage() : scan_.skip_value();
    }
    if (json_str_eq(key, "error")) {
      error_present = false;
      err_message = err_type = JsonStr{};
      err_code_set = false;
      err_code = 0;
      if (c == '{') {
        error_present = true;
        return error_object();
      }
      if (c == '"') {
        error_present = true;
        return scan_.string(err_message);
      }
      return scan_.skip_value();
    }
    if (json_str_eq(key, "object")) {
      JsonStr s;
      if (!scan_.string_or_other(s)) return false;
      object_is_error = s.present && json_str_eq(s, "error");
      return true;
    }
    if (json_str_eq(key, "message")) return scan_.string_or_other(top_message);
    if (json_str_eq(key, "type")) return scan_.string_or_other(top_type);
    if (json_str_eq(key, "code")) return scan_.int_or_other(top_code_set, top_code);
    return scan_.skip_value();
  }

  JsonScan scan_;
  OpenAiStreamEvent& out_;
  std::string* text_out_;
  size_t text_out_base_;
};

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

OpenAiEventKind interpret_openai_json(std::string_view json, OpenAiStreamEvent& out,
                                      std::string* text_out) {
  out.clear();
  OpenAiFields sc(json, out, text_out);
  if (!sc.run()) {
    sc.rollback_text();
    set_malformed(out, json.empty()      ? "empty event data"
                       : sc.too_deep() ? json_too_deep_message(sc.offset())
                                       : "invalid JSON object near byte " + std::to_string(sc.offset()));
    return out.kind;
  }
  if (sc.error_present) {
    sc.rollback_text();
    set_server_error(out, json_decode(sc.err_message), json_decode(sc.err_type),
                     sc.err_code_set ? sc.err_code : 0);
  } else if (sc.object_is_error) {
    sc.rollback_text();
    set_server_error(out, json_decode(sc.top_message), json_decode(sc.top_type),
                     sc.top_code_set ? sc.top_code : 0);
  } else {
    out.has_token = out.token_choices > 0;
  }
  return out.kind;
}

OpenAiEventKind interpret_openai_event(std::string_view data, OpenAiStreamEvent& out,
                                       std::string* text_out) {
  if (data.size() >= 6 && trim(data) == "[DONE]") {
    out.clear();
    out.kind = OpenAiEventKind::kDone;
    return out.kind;
  }
  return interpret_openai_json(data, out, text_out);
}

OpenAiEventKind interpret_openai_event(const SseEvent& event, OpenAiStreamEvent& out,
                                       std::string* text_out) {
  if (event.type == "error") {
    interpret_openai_json(event.data, out, text_out);
    if (out.error_kind != kServerError) {
      set_server_error(out, event.data, "", 0);
    }
    return out.kind;
  }
  return interpret_openai_event(event.data, out, text_out);
}

void OpenAiStreamSummary::add(const OpenAiStreamEvent& ev) {
  ++events;
  switch (ev.kind) {
    case OpenAiEventKind::kDone:
      done = true;
      break;
    case OpenAiEventKind::kError:
      if (!error) {
        error = true;
        error_kind = ev.error_kind;
        error_message = ev.error_message;
      }
      break;
    case OpenAiEventKind::kChunk:
      if (ev.has_token) ++token_events;
      text_bytes += ev.text_bytes;
      reasoning_bytes += ev.reasoning_bytes;
      if (ev.has_usage) {
        prompt_tokens = ev.prompt_tokens;
        completion_tokens = ev.completion_tokens;
      }
      if (!ev.finish_reason.empty()) finish_reason = ev.finish_reason;
      break;
  }
}

}  // namespace runara
