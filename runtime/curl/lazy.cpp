// libcurl, loaded when first used. Linking it costs every start of runara about 3 ms (its
// dependency tree is 30 shared libraries: GnuTLS, Kerberos, LDAP, RTMP, ...), although a run that
// never speaks HTTPS or calls the DigitalOcean API never needs it. So runara does not link
// libcurl: it defines the libcurl functions it calls, and each one, on its first call, opens
// libcurl.so.4 (dlopen) and forwards to the real function from then on.
//
// Contract: any thread (function-local statics resolve once, thread-safely). A missing libcurl
// throws std::runtime_error from the first call, which is always runara's own code (libcurl's
// callbacks run only once libcurl is loaded). Only the functions runara calls are here: calling
// another one fails at link time, which is where it should. A program linking libcurl itself
// (the tests do) may: dlopen returns the loaded library, and its calls still reach libcurl.
#include <curl/curl.h>

#include <cstdarg>

#include "base/lazy_library.hpp"

namespace {

void* library() {
  static void* const lib = runara::open_library("libcurl.so.4", "libcurl4");
  return lib;
}

template <class F>
F* real(const char* name) {
  return reinterpret_cast<F*>(runara::library_symbol(library(), "libcurl.so.4", name));
}

#define RUNARA_CURL_REAL(name) static auto* const fn = real<decltype(name)>(#name)

// The variadic setters take one argument whose type the option's number encodes (curl.h's
// CURLOPTTYPE_*); it is read back as that type and passed on, so the callee's va_arg matches.
using AnyFunction = void (*)();

template <class Result, class Handle, class Option>
Result forward_option(Result (*fn)(Handle*, Option, ...), Handle* handle, Option option, va_list args) {
  const long kind = static_cast<long>(option) / 10000 * 10000;
  if (kind == CURLOPTTYPE_LONG) return fn(handle, option, va_arg(args, long));
  if (kind == CURLOPTTYPE_FUNCTIONPOINT) return fn(handle, option, va_arg(args, AnyFunction));
  if (kind == CURLOPTTYPE_OFF_T) return fn(handle, option, va_arg(args, curl_off_t));
  return fn(handle, option, va_arg(args, void*));  // objects, strings, lists, blobs
}

}  // namespace

extern "C" {

CURLcode curl_global_init(long flags) {
  RUNARA_CURL_REAL(curl_global_init);
  return fn(flags);
}

CURL* curl_easy_init(void) {
  RUNARA_CURL_REAL(curl_easy_init);
  return fn();
}

CURLcode curl_easy_setopt(CURL* curl, CURLoption option, ...) {
  RUNARA_CURL_REAL(curl_easy_setopt);
  va_list args;
  va_start(args, option);
  const CURLcode result = forward_option(fn, curl, option, args);
  va_end(args);
  return result;
}

// Every CURLINFO_* takes a pointer to where the answer goes.
CURLcode curl_easy_getinfo(CURL* curl, CURLINFO info, ...) {
  RUNARA_CURL_REAL(curl_easy_getinfo);
  va_list args;
  va_start(args, info);
  void* out = va_arg(args, void*);
  va_end(args);
  return fn(curl, info, out);
}

void curl_easy_reset(CURL* curl) {
  RUNARA_CURL_REAL(curl_easy_reset);
  fn(curl);
}

void curl_easy_cleanup(CURL* curl) {
  RUNARA_CURL_REAL(curl_easy_cleanup);
  fn(curl);
}

const char* curl_easy_strerror(CURLcode code) {
  RUNARA_CURL_REAL(curl_easy_strerror);
  return fn(code);
}

CURLM* curl_multi_init(void) {
  RUNARA_CURL_REAL(curl_multi_init);
  return fn();
}

// CURLMOPT_* numbers encode their argument's type as CURLOPT_* ones do.
CURLMcode curl_multi_setopt(CURLM* multi, CURLMoption option, ...) {
  RUNARA_CURL_REAL(curl_multi_setopt);
  va_list args;
  va_start(args, option);
  const CURLMcode result = forward_option(fn, multi, option, args);
  va_end(args);
  return result;
}

CURLMcode curl_multi_add_handle(CURLM* multi, CURL* easy) {
  RUNARA_CURL_REAL(curl_multi_add_handle);
  return fn(multi, easy);
}

CURLMcode curl_multi_remove_handle(CURLM* multi, CURL* easy) {
  RUNARA_CURL_REAL(curl_multi_remove_handle);
  return fn(multi, easy);
}

CURLMcode curl_multi_socket_action(CURLM* multi, curl_socket_t s, int ev_bitmask, int* running_handles) {
  RUNARA_CURL_REAL(curl_multi_socket_action);
  return fn(multi, s, ev_bitmask, running_handles);
}

CURLMsg* curl_multi_info_read(CURLM* multi, int* msgs_in_queue) {
  RUNARA_CURL_REAL(curl_multi_info_read);
  return fn(multi, msgs_in_queue);
}

CURLMcode curl_multi_cleanup(CURLM* multi) {
  RUNARA_CURL_REAL(curl_multi_cleanup);
  return fn(multi);
}

CURLSH* curl_share_init(void) {
  RUNARA_CURL_REAL(curl_share_init);
  return fn();
}

// CURLSHOPT_SHARE and _UNSHARE take a curl_lock_data (an int once passed through "..."), the
// lock functions a function pointer, USERDATA a pointer.
CURLSHcode curl_share_setopt(CURLSH* share, CURLSHoption option, ...) {
  RUNARA_CURL_REAL(curl_share_setopt);
  va_list args;
  va_start(args, option);
  CURLSHcode result;
  if (option == CURLSHOPT_SHARE || option == CURLSHOPT_UNSHARE) result = fn(share, option, va_arg(args, int));
  else if (option == CURLSHOPT_LOCKFUNC || option == CURLSHOPT_UNLOCKFUNC) result = fn(share, option, va_arg(args, AnyFunction));
  else result = fn(share, option, va_arg(args, void*));
  va_end(args);
  return result;
}

CURLSHcode curl_share_cleanup(CURLSH* share) {
  RUNARA_CURL_REAL(curl_share_cleanup);
  return fn(share);
}

struct curl_slist* curl_slist_append(struct curl_slist* list, const char* data) {
  RUNARA_CURL_REAL(curl_slist_append);
  return fn(list, data);
}

void curl_slist_free_all(struct curl_slist* list) {
  RUNARA_CURL_REAL(curl_slist_free_all);
  fn(list);
}

CURLU* curl_url(void) {
  RUNARA_CURL_REAL(curl_url);
  return fn();
}

CURLUcode curl_url_set(CURLU* handle, CURLUPart what, const char* part, unsigned int flags) {
  RUNARA_CURL_REAL(curl_url_set);
  return fn(handle, what, part, flags);
}

CURLUcode curl_url_get(CURLU* handle, CURLUPart what, char** part, unsigned int flags) {
  RUNARA_CURL_REAL(curl_url_get);
  return fn(handle, what, part, flags);
}

const char* curl_url_strerror(CURLUcode code) {
  RUNARA_CURL_REAL(curl_url_strerror);
  return fn(code);
}

void curl_url_cleanup(CURLU* handle) {
  RUNARA_CURL_REAL(curl_url_cleanup);
  fn(handle);
}

void curl_free(void* p) {
  RUNARA_CURL_REAL(curl_free);
  fn(p);
}

time_t curl_getdate(const char* text, const time_t* unused) {
  RUNARA_CURL_REAL(curl_getdate);
  return fn(text, unused);
}

curl_version_info_data* curl_version_info(CURLversion version) {
  RUNARA_CURL_REAL(curl_version_info);
  return fn(version);
}

}  // extern "C"
