// Secrets (API tokens, HF_TOKEN, ...): held in C++, handed to scripts only as opaque handles,
// and scrubbed from every line of output, log, result and final error message.
//
// Redaction must not be an oracle (docs/permissions.md, "Redaction is not an oracle"): its cost
// depends only on the lengths of the text and the values, and a value's mask is as long as the
// value. Callers redact only text the script cannot read back. Lua thread only (not locked).
#pragma once

#include <map>
#include <string>
#include <string_view>

#include <lua.hpp>

#include "runara/secret_mask.hpp"

namespace runara {

class Secrets {
 public:
  // `grantable`: scripts may get a handle (--secret). Others, like the cloud token, are only
  // ever redacted: a handle could be passed to a machine the script controls.
  void add(const std::string& name, const std::string& value, bool grantable = true);
  bool has(const std::string& name) const { return values_.count(name) != 0; }
  bool grantable(const std::string& name) const { return granted_.count(name) != 0; }
  const std::string* value(const std::string& name) const;
  // Masks every occurrence of a secret's value with mask_for(NAME, its length): the result is
  // exactly as long as `text`, and the time taken does not depend on the bytes of either.
  std::string redact(std::string_view text) const;
  std::size_t longest() const { return mask_.longest(); }  // the longest value's length (0: none)
  const SecretMask& mask() const { return mask_; }  // the same masking, for other threads (a copy)
  // "<secret NAME>" fitted to `length`: padded with '*' before the '>', or "<**>" / "*" if shorter.
  static std::string mask_for(const std::string& name, std::size_t length);

  // Lua side: a handle is a userdata holding the secret's name, printing as <secret NAME>.
  static void register_metatable(lua_State* L);
  static void push_handle(lua_State* L, const std::string& name);
  static const char* handle_name(lua_State* L, int index);  // nullptr if not a handle

 private:
  std::map<std::string, std::string> values_;
  std::map<std::string, bool> granted_;
  SecretMask mask_;  // each value with its mask_for(), rebuilt by add()
};

}  // namespace runara
