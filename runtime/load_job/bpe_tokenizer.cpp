// Loading a byte-level BPE tokenizer.json and encoding text with it, following the Hugging Face
// tokenizers library's semantics (checked against its recorded output in test_bpe_tokenizer.cpp).
#include "load_job/bpe_tokenizer.hpp"

#include <algorithm>
#include <queue>

#include <nlohmann/json.hpp>

#include "base/json_limits.hpp"

namespace runara {

namespace {

using nlohmann::json;

// GPT-2's pre-tokenizer regex, which ByteLevel applies when use_regex is true.
constexpr std::string_view kGpt2Pattern =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";
constexpr std::size_t kCachedPieceBytes = 64;
constexpr std::size_t kCacheEntries = 1 << 16;

// GPT-2's byte-to-character table: printable Latin-1 bytes stand for themselves, the other 68
// bytes for U+0100 onwards in byte order, so every token is printable text. UTF-8 of each.
std::vector<std::string> byte_spellings() {
  std::vector<std::string> out(256);
  int next = 256;
  for (int b = 0; b < 256; ++b) {
    const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
    const int cp = printable ? b : next++;
    if (cp < 0x80) {
      out[b] = std::string(1, static_cast<char>(cp));
    } else {
      out[b] = {static_cast<char>(0xC0 | (cp >> 6)), static_cast<char>(0x80 | (cp & 0x3F))};
    }
  }
  return out;
}

const std::vector<std::string>& spellings() {
  static const std::vector<std::string> table = byte_spellings();
  return table;
}

std::uint64_t pair_key(int left, int right) {
  return static_cast<std::uint64_t>(static_cast<std::uint32_t>(left)) << 32 | static_cast<std::uint32_t>(right);
}

std::string type_of(const json& j) { return j.is_object() && j.contains("type") && j["type"].is_string() ? j["type"].get<std::string>() : ""; }

bool is_empty_or_null(const json& j, const char* key) {
  if (!j.contains(key) || j[key].is_null()) return true;
  return j[key].is_string() && j[key].get_ref<const std::string&>().empty();
}

std::string excerpt(const json& j) {
  std::string s = j.dump();
  return s.size() > 60 ? s.substr(0, 60) + "..." : s;
}

}  // namespace

// Builds the tokenizer step by step; each reader sets `error` (naming the JSON path) and
// returns false on what it cannot honour.
struct TokenizerLoader {
  std::string& error;

  bool fail(std::string why) {
    error = std::move(why);
    return false;
  }

  bool normalizer(const json& doc) {
    if (!doc.contains("normalizer") || doc["normalizer"].is_null()) return true;
    return fail("normalizer \"" + type_of(doc["normalizer"]) +
                "\" is not supported: runara would count different tokens than the model (only tokenizers without a normalizer, such as GPT-2's and Llama 3's, are)");
  }

  bool pre_tokenizer(const json& p, const std::string& where, std::vector<BpeTokenizer::Step>& steps, bool& byte_level) {
    const std::string type = type_of(p);
    if (type == "Sequence") {
      if (!p.contains("pretokenizers") || !p["pretokenizers"].is_array()) return fail(where + ".pretokenizers: expected an array");
      for (std::size_t i = 0; i < p["pretokenizers"].size(); ++i)
        if (!pre_tokenizer(p["pretokenizers"][i], where + ".pretokenizers[" + std::to_string(i) + "]", steps, byte_level)) return false;
      return true;
    }
    if (type == "ByteLevel") return byte_level_step(p, where, steps, byte_level);
    if (type == "Split") return split_step(p, where, steps);
    return fail(where + ": pre-tokenizer \"" + type + "\" is not supported (byte-level BPE tokenizers only: ByteLevel and Split)");
  }

  bool byte_level_step(const json& p, const std::string& where, std::vector<BpeTokenizer::Step>& steps, bool& byte_level) {
    BpeTokenizer::Step s;
    s.prefix_space = p.value("add_prefix_space", false);
    if (p.value("use_regex", true)) {
      auto compiled = RegexSplitter::compile(kGpt2Pattern, false);
      if (!compiled) return fail(where + ": " + compiled.error());
      s.split = std::move(compiled).value();
    }
    byte_level = true;
    steps.push_back(std::move(s));
    return true;
  }

  bool split_step(const json& p, const std::string& where, std::vector<BpeTokenizer::Step>& steps) {
    if (p.value("invert", false)) return fail(where + ".invert: true is not supported");
    const std::string behavior = p.contains("behavior") && p["behavior"].is_string() ? p["behavior"].get<std::string>() : "";
    if (behavior != "Isolated") return fail(where + ".behavior: \"" + behavior + "\" is not supported (only \"Isolated\")");
    const json& pattern = p.contains("pattern") ? p["pattern"] : json();
    const bool literal = pattern.is_object() && pattern.contains("String") && pattern["String"].is_string();
    if (!literal && !(pattern.is_object() && pattern.contains("Regex") && pattern["Regex"].is_string()))
      return fail(where + ".pattern: expected {\"Regex\": string} or {\"String\": string}, got " + excerpt(pattern));
    BpeTokenizer::Step s;
    auto compiled = RegexSplitter::compile(pattern[literal ? "String" : "Regex"].get<std::string>(), literal);
    if (!compiled) return fail(where + ".pattern: " + compiled.error());
    s.split = std::move(compiled).value();
    steps.push_back(std::move(s));
    return true;
  }

  bool model_options(const json& m) {
    if (type_of(m) != "BPE" && m.contains("type")) return fail("model.type: \"" + type_of(m) + "\" is not supported (only \"BPE\")");
    if (m.contains("dropout") && !m["dropout"].is_null() && !(m["dropout"].is_number() && m["dropout"].get<double>() == 0))
      return fail("model.dropout: BPE dropout picks tokens at random; counts would not be reproducible");
    if (m.value("byte_fallback", false)) return fail("model.byte_fallback: SentencePiece-style BPE (Llama 2, Mistral 7B) is not supported");
    for (const char* key : {"continuing_subword_prefix", "end_of_word_suffix"})
      if (!is_empty_or_null(m, key)) return fail(std::string("model.") + key + ": not supported");
    return true;
  }

  bool vocab(const json& m, std::unordered_map<std::string, int>& out) {
    if (!m.contains("vocab") || !m["vocab"].is_object()) return fail("model.vocab: expected an object of token: id");
    out.reserve(m["vocab"].size());
    for (const auto& [token, id] : m["vocab"].items()) {
      if (!id.is_number_integer() || id.get<long long>() < 0 || id.get<long long>() > INT32_MAX)
        return fail("model.vocab[\"" + token.substr(0, 40) + "\"]: expected an id from 0 to 2^31-1, got " + excerpt(id));
      out.emplace(token, id.get<int>());
    }
    return true;
  }

  static bool split_merge(const json& entry, std::string& left, std::string& right) {
    if (entry.is_array() && entry.size() == 2 && entry[0].is_string() && entry[1].is_string()) {
      left = entry[0].get<std::string>();
      right = entry[1].get<std::string>();
      return true;
    }
    if (!entry.is_string()) return false;
    const std::string& s = entry.get_ref<const std::string&>();
    const std::size_t space = s.find(' ', 1);  // byte-level tokens never hold a space
    if (space == std::string::npos || s.find(' ', space + 1) != std::string::npos) return false;
    left = s.substr(0, space);
    right = s.substr(space + 1);
    return true;
  }

  bool merges(const json& m, const std::unordered_map<std::string, int>& vocab,
              std::unordered_map<std::uint64_t, std::pair<int, int>>& out) {
    if (!m.contains("merges") || !m["merges"].is_array()) return fail("model.merges: expected an array");
    const json& list = m["merges"];
    out.reserve(list.size());
    std::string left, right;
    for (std::size_t rank = 0; rank < list.size(); ++rank) {
      const std::string where = "model.merges[" + std::to_string(rank) + "]";
      if (!split_merge(list[rank], left, right)) return fail(where + ": expected \"A B\" or [\"A\", \"B\"], got " + excerpt(list[rank]));
      const auto a = vocab.find(left), b = vocab.find(right), ab = vocab.find(left + right);
      if (a == vocab.end() || b == vocab.end() || ab == vocab.end())
        return fail(where + ": " + excerpt(list[rank]) + " names a token that is not in model.vocab");
      out.emplace(pair_key(a->second, b->second), std::pair{static_cast<int>(rank), ab->second});
    }
    return true;
  }

  bool added_tokens(const json& doc, std::vector<std::pair<std::string, int>>& out) {
    if (!doc.contains("added_tokens") || doc["added_tokens"].is_null()) return true;
    if (!doc["added_tokens"].is_array()) return fail("added_tokens: expected an array");
    for (std::size_t i = 0; i < doc["added_tokens"].size(); ++i) {
      const json& t = doc["added_tokens"][i];
      if (!t.is_object() || !t.contains("content") || !t["content"].is_string() || t["content"].get_ref<const std::string&>().empty() ||
          !t.contains("id") || !t["id"].is_number_integer() || t["id"].get<long long>() < 0 || t["id"].get<long long>() > INT32_MAX)
        return fail("added_tokens[" + std::to_string(i) + "]: expected {\"id\": integer, \"content\": non-empty string}, got " + excerpt(t));
      out.emplace_back(t["content"].get<std::string>(), t["id"].get<int>());
    }
    std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.first.size() > b.first.size(); });
    return true;
  }
};

Result<BpeTokenizer> BpeTokenizer::from_json(std::string_view text) {
  std::string error;
  auto made = load(text, error);
  if (!made) return Error{error};
  return std::move(*made);
}

std::optional<BpeTokenizer> BpeTokenizer::load(std::string_view text, std::string& error) {
  auto parsed = parse_json_limited(text, error);
  if (!parsed) return std::nullopt;
  const json& doc = *parsed;
  if (!doc.is_object() || !doc.contains("model") || !doc["model"].is_object()) {
    error = "expected a Hugging Face tokenizer.json (an object with a \"model\" object)";
    return std::nullopt;
  }
  BpeTokenizer t;
  TokenizerLoader load{error};
  bool byte_level = false;
  const json& m = doc["model"];
  if (!load.normalizer(doc) || !load.model_options(m)) return std::nullopt;
  if (doc.contains("pre_tokenizer") && !doc["pre_tokenizer"].is_null() &&
      !load.pre_tokenizer(doc["pre_tokenizer"], "pre_tokenizer", t.steps_, byte_level))
    return std::nullopt;
  if (!byte_level) {
    error = "pre_tokenizer: no ByteLevel step; only byte-level BPE tokenizers (GPT-2, Llama 3, …) are supported";
    return std::nullopt;
  }
  if (!load.vocab(m, t.vocab_) || !load.merges(m, t.vocab_, t.merges_) || !load.added_tokens(doc, t.added_)) return std::nullopt;
  for (int b = 0; b < 256; ++b) {
    const auto it = t.vocab_.find(spellings()[b]);
    if (it == t.vocab_.end()) {
      error = "model.vocab: no token for byte " + std::to_string(b) + " (\"" + spellings()[b] + "\"): not a byte-level vocabulary";
      return std::nullopt;
    }
    t.byte_ids_[b] = it->second;
  }
  for (const auto& [content, id] : t.added_) t.added_starts_[static_cast<unsigned char>(content[0])] = true;
  t.ignore_merges_ = m.value("ignore_merges", false);
  return t;
}

// BPE on one piece: start from its bytes' tokens and apply the lowest-ranked merge present,
// leftmost first, until none applies (Hugging Face's order; a heap keeps long pieces n log n).
void BpeTokenizer::encode_piece(std::string_view piece, std::vector<int>& ids) const {
  const bool cacheable = piece.size() <= kCachedPieceBytes;
  if (cacheable) {
    if (auto hit = cache_.find(std::string(piece)); hit != cache_.end()) {
      ids.insert(ids.end(), hit->second.begin(), hit->second.end());
      return;
    }
  }
  std::vector<int> out;
  if (ignore_merges_) {
    std::string spelled;
    for (unsigned char c : piece) spelled += spellings()[c];
    if (auto it = vocab_.find(spelled); it != vocab_.end()) out.push_back(it->second);
  }
  if (out.empty()) {
    struct Symbol { int id, prev, next; bool alive; };
    std::vector<Symbol> sym(piece.size());
    for (std::size_t i = 0; i < piece.size(); ++i)
      sym[i] = {byte_ids_[static_cast<unsigned char>(piece[i])], static_cast<int>(i) - 1,
                i + 1 < piece.size() ? static_cast<int>(i) + 1 : -1, true};
    struct Candidate { int rank, left, merged, left_id, right_id; };
    auto later = [](const Candidate& a, const Candidate& b) { return a.rank != b.rank ? a.rank > b.rank : a.left > b.left; };
    std::priority_queue<Candidate, std::vector<Candidate>, decltype(later)> heap(later);
    auto offer = [&](int left) {
      if (left < 0 || sym[left].next < 0) return;
      const int right = sym[left].next;
      if (auto it = merges_.find(pair_key(sym[left].id, sym[right].id)); it != merges_.end())
        heap.push({it->second.first, left, it->second.second, sym[left].id, sym[right].id});
    };
    for (int i = 0; i + 1 < static_cast<int>(sym.size()); ++i) offer(i);
    while (!heap.empty()) {
      const Candidate c = heap.top();
      heap.pop();
      Symbol& l = sym[c.left];
      if (!l.alive || l.id != c.left_id || l.next < 0 || sym[l.next].id != c.right_id) continue;  // stale
      Symbol& r = sym[l.next];
      l.id = c.merged;
      r.alive = false;
      l.next = r.next;
      if (r.next >= 0) sym[r.next].prev = c.left;
      offer(l.prev);
      offer(c.left);
    }
    for (int i = sym.empty() ? -1 : 0; i >= 0; i = sym[i].next) out.push_back(sym[i].id);
  }
  ids.insert(ids.end(), out.begin(), out.end());
  if (cacheable && cache_.size() < kCacheEntries) cache_.emplace(std::string(piece), std::move(out));
}

bool BpeTokenizer::encode_plain(std::string_view text, std::vector<int>& ids, std::string& error) const {
  if (text.empty()) return true;
  std::vector<std::string> pieces{std::string(text)};
  std::vector<std::string_view> parts;
  for (const Step& step : steps_) {
    std::vector<std::string> next;
    for (std::string& piece : pieces) {
      if (step.prefix_space && piece.front() != ' ') piece.insert(piece.begin(), ' ');
      if (!step.split) {
        next.push_back(std::move(piece));
        continue;
      }
      parts.clear();
      if (!step.split->split(piece, parts, error)) return false;
      for (std::string_view p : parts) next.emplace_back(p);
    }
    pieces = std::move(next);
  }
  for (const std::string& piece : pieces) encode_piece(piece, ids);
  return true;
}

bool BpeTokenizer::encode(std::string_view text, std::vector<int>& ids, std::string& error) const {
  std::size_t plain = 0;
  for (std::size_t i = 0; i < text.size();) {
    const std::pair<std::string, int>* hit = nullptr;
    if (added_starts_[static_cast<unsigned char>(text[i])]) {
      for (const auto& added : added_)
        if (text.substr(i).starts_with(added.first)) {
          hit = &added;
          break;
        }
    }
    if (hit == nullptr) {
      ++i;
      continue;
    }
    if (!encode_plain(text.substr(plain, i - plain), ids, error)) return false;
    ids.push_back(hit->second);
    i += hit->first.size();
    plain = i;
  }
  return encode_plain(text.substr(plain), ids, error);
}

int BpeTokenizer::count(std::string_view text, std::string& error) const {
  std::vector<int> ids;
  return encode(text, ids, error) ? static_cast<int>(ids.size()) : -1;
}

}  // namespace runara
