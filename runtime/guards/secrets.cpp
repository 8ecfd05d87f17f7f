#include "guards/secrets.hpp"

#include <cstring>

namespace runara {

namespace {
const char* const kHandleType = "runara.secret";

int handle_tostring(lua_State* L) {
  lua_pushfstring(L, "<secret %s>", Secrets::handle_name(L, 1));
  return 1;
}

// Any attempt to turn a handle into text other than tostring() ends up here.
int handle_refuse(lua_State* L) {
  return luaL_error(L, "a secret handle cannot be read, concatenated or compared; "
                       "pass it to a primitive that sends it to a machine");
}

}  // namespace

// The mask of a value: as long as the value itself, so the redacted text has the same length
// whether or not a secret was in it (a length difference would show in how long writing it takes).
std::string Secrets::mask_for(const std::string& name, std::size_t length) {
  const std::string full = "<secret " + name + ">";
  if (length >= full.size()) return full.substr(0, full.size() - 1) + std::string(length - full.size(), '*') + ">";
  if (length >= 2) return "<" + std::string(length - 2, '*') + ">";
  return std::string(length, '*');
}

void Secrets::add(const std::string& name, const std::string& value, bool grantable) {
  values_[name] = value;
  if (grantable) granted_[name] = true;
  else granted_.erase(name);  // re-added as never grantable (the cloud token): stays so
  std::vector<std::pair<std::string, std::string>> pairs;
  for (const auto& [n, v] : values_) pairs.emplace_back(v, mask_for(n, v.size()));
  mask_ = SecretMask(std::move(pairs));
}

std::string Secrets::redact(std::string_view text) const {
  std::string out(text);
  mask_.apply(out.data(), out.size());
  return out;
}

const std::string* Secrets::value(const std::string& name) const {
  auto it = values_.find(name);
  return it == values_.end() ? nullptr : &it->second;
}

void Secrets::register_metatable(lua_State* L) {
  luaL_newmetatable(L, kHandleType);
  lua_pushcfunction(L, handle_tostring);
  lua_setfield(L, -2, "__tostring");
  for (const char* event : {"__concat", "__index", "__newindex", "__len", "__call", "__lt", "__le"}) {
    lua_pushcfunction(L, handle_refuse);
    lua_setfield(L, -2, event);
  }
  lua_pushliteral(L, "secret");
  lua_setfield(L, -2, "__metatable");  // getmetatable() shows this, setmetatable() refuses
  lua_pop(L, 1);
}

void Secrets::push_handle(lua_State* L, const std::string& name) {
  auto* block = static_cast<char*>(lua_newuserdata(L, name.size() + 1));
  std::memcpy(block, name.c_str(), name.size() + 1);
  luaL_getmetatable(L, kHandleType);
  lua_setmetatable(L, -2);
}

const char* Secrets::handle_name(lua_State* L, int index) {
  void* block = lua_touserdata(L, index);
  if (!block || !lua_getmetatable(L, index)) return nullptr;
  luaL_getmetatable(L, kHandleType);
  const bool same = lua_rawequal(L, -1, -2);
  lua_pop(L, 2);
  return same ? static_cast<const char*>(block) : nullptr;
}

}  // namespace runara
