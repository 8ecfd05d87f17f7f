// Secrets (API tokens, HF_TOKEN, ...): held in C++, handed to scripts only as opaque handles,
// and scrubbed from every line of output, log, result and error message.
#pragma once

#include <map>
#include <string>
#include <string_view>

#include <lua.hpp>

namespace runara {

class Secrets {
 public:
  // `grantable`: scripts may get a handle (--secret). Others, like the cloud token, are only
  // ever redacted: a handle could be passed to a machine the script controls.
  void add(const std::string& name, const std::string& value, bool grantable = true);
  bool has(const std::string& name) const { return values_.count(name) != 0; }
  bool grantable(const std::string& name) const { return granted_.count(name) != 0; }
  const std::string* value(const std::string& name) const;
  // Replaces every occurrence of a secret's value with "<secret NAME>".
  std::string redact(std::string_view text) const;

  // Lua side: a handle is a userdata holding the secret's name, printing as <secret NAME>.
  static void register_metatable(lua_State* L);
  static void push_handle(lua_State* L, const std::string& name);
  static const char* handle_name(lua_State* L, int index);  // nullptr if not a handle

 private:
  std::map<std::string, std::string> values_;
  std::map<std::string, bool> granted_;
};

}  // namespace runara
