// How an engine says an operation failed: it returns Result<T> (a value, or an Error) and, when
// the answer comes later, calls back with one. The only convention for engines' public functions
// (issue 29): no `std::string& error` out-parameters, no "empty string means ok", no exceptions
// across an engine's surface. The primitives turn an Error into a Lua error in one place
// (bindings/kit/raise.hpp), prefixed with the Lua function's name.
//
// An Error's message is for a person and complete on its own ("connecting to 10.0.0.1:22:
// connection refused"); it never names the Lua function (the binding adds that) and never holds
// a secret's value (engines see secrets; the binding's Context redacts what it raises anyway).
//
// Contract: plain values, no threads, no Lua; cheap to move.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace runara {

struct Error {
  std::string message;
  // The user's setup is wrong (no cloud token, a size the cloud does not sell, no SSH key, a host
  // key known_hosts lacks, a machine of the user's that refuses the connection): retrying cannot
  // help, and the fix is on the command line. The bindings raise it as a usage error
  // (Context::fail_usage): the run exits 2 with the message alone, no traceback.
  bool setup = false;
};

template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::in_place_index<0>, std::move(value)) {}
  Result(Error error) : v_(std::in_place_index<1>, std::move(error)) {}

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }
  T& value() & { return std::get<0>(v_); }
  const T& value() const& { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  // The failure's message; "" when the result is a value.
  const std::string& error() const {
    static const std::string none;
    return ok() ? none : std::get<1>(v_).message;
  }
  // The failure itself (message and kind); an empty Error when the result is a value.
  Error failure() const { return ok() ? Error{} : std::get<1>(v_); }

 private:
  std::variant<T, Error> v_;
};

// Success with nothing to return, or an Error.
template <>
class [[nodiscard]] Result<void> {
 public:
  Result() = default;
  Result(Error error) : error_(std::move(error)) {}

  bool ok() const { return !error_; }
  explicit operator bool() const { return ok(); }
  const std::string& error() const {
    static const std::string none;
    return error_ ? error_->message : none;
  }
  Error failure() const { return error_ ? *error_ : Error{}; }

 private:
  std::optional<Error> error_;
};

using Status = Result<void>;

// For code being converted from the "empty string means ok" style.
inline Status status_from(std::string error) {
  if (error.empty()) return {};
  return Error{std::move(error)};
}

}  // namespace runara
