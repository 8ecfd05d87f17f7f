// The load's native transport: plain http:// over HTTP/1.1 keep-alive connections
// (Http1Connection), with each request's head prepared once per load and the target resolved
// and judged once per worker.
#include <sys/socket.h>

#include <cstdio>
#include <cstring>
#include <string_view>
#include <vector>

#include "load/http1_connection.hpp"
#include "load/shared.hpp"
#include "load/transport.hpp"
#include "load/request_target.hpp"

namespace runara {

namespace {

class NativeTransport;

class NativeSlot final : public SlotConnection, Http1Connection::Handler {
 public:
  NativeSlot(NativeTransport& transport, SlotEvents& events);
  void send(const std::string& body, bool has_body) override;
  void abort() override { conn_.abort(); }

 private:
  void on_status(int status) override { events_.on_status(status); }
  bool on_body(const char* data, std::size_t len, std::int64_t arrived_ns) override;
  void on_complete(ErrorKind error, const std::string& message) override { events_.on_complete(error, message); }

  NativeTransport& transport_;
  SlotEvents& events_;
  Http1Connection conn_;
  // "Content-Length: N" and the blank line of the request in flight, when it has a body: the
  // rest of the head is the load's (head_prefix), so a slot keeps no copy of it.
  char head_end_[48] = {};  // 16 + at most 20 digits + 4
};

class NativeTransport final : public LoadTransport {
 public:
  NativeTransport(uv_loop_t* loop, LoadShared& shared) : loop(loop), shared(shared), spec(shared.spec) {
    prepare_heads();
    resolve();
  }

  std::unique_ptr<SlotConnection> open(SlotEvents& events) override {
    return std::make_unique<NativeSlot>(*this, events);
  }
  std::size_t slot_bytes() const override { return 0; }  // the read buffer is the worker's
  void close() override {}

  uv_loop_t* loop;
  LoadShared& shared;
  const LoadSpec& spec;
  sockaddr_storage address{};
  ErrorKind unreachable = ErrorKind::kNone;  // why no request can be sent, if so
  std::string unreachable_message;
  std::string head_prefix;        // request line + fixed headers
  std::string head_without_body;  // the whole head of a GET/HEAD
  std::vector<char> read_buffer = std::vector<char>(256 * 1024);

 private:
  void prepare_heads() {
    const std::string target = request_target_of(spec.url);
    const std::string host_header = spec.url_host + (spec.url_port == 80 ? "" : ":" + std::to_string(spec.url_port));
    head_prefix = spec.method + " " + target + " HTTP/1.1\r\nHost: " + host_header + "\r\nUser-Agent: runara\r\nAccept: */*\r\n";
    for (const auto& h : spec.header_lines()) head_prefix += h + "\r\n";
    head_without_body = head_prefix + "\r\n";
  }

  // Once for the whole load (on the worker thread, not the Lua thread), each address judged by
  // the sandbox's target policy.
  void resolve() {
    const auto found = resolve_host(spec.url_host, spec.url_port);
    if (!found || found->empty()) {
      unreachable_message = found.error();
      unreachable = ErrorKind::kConnect;
      return;
    }
    unreachable = ErrorKind::kRefused;
    for (const auto& a : found.value()) {
      std::string why;
      if (spec.policy && !spec.policy->allows(reinterpret_cast<const sockaddr*>(&a), spec.url_host, why)) {
        if (unreachable_message.empty()) unreachable_message = why;
        continue;
      }
      address = a;
      unreachable = ErrorKind::kNone;
      unreachable_message.clear();
      break;
    }
  }
};

NativeSlot::NativeSlot(NativeTransport& transport, SlotEvents& events)
    : transport_(transport),
      events_(events),
      conn_(transport.loop, transport.address, *this, transport.read_buffer.data(), transport.read_buffer.size(),
            transport.spec.method == "HEAD") {
  if (transport.unreachable != ErrorKind::kNone) conn_.refuse(transport.unreachable, transport.unreachable_message);
}

void NativeSlot::send(const std::string& body, bool has_body) {
  const auto timeout_ms = static_cast<std::uint64_t>(transport_.spec.timeout_s * 1000);
  if (!has_body) return conn_.send(transport_.head_without_body, {}, {}, timeout_ms);
  const int n = std::snprintf(head_end_, sizeof head_end_, "Content-Length: %zu\r\n\r\n", body.size());
  conn_.send(transport_.head_prefix, std::string_view(head_end_, static_cast<std::size_t>(n)), body, timeout_ms);
}

// Http1Connection reports the kernel's receive time on uv_hrtime()'s clock; slots count from the
// load's start.
bool NativeSlot::on_body(const char* data, std::size_t len, std::int64_t arrived_ns) {
  return events_.on_body(data, len, arrived_ns - transport_.shared.start_ns);
}

}  // namespace

std::unique_ptr<LoadTransport> make_native_transport(uv_loop_t* loop, LoadShared& shared) {
  return std::make_unique<NativeTransport>(loop, shared);
}

}  // namespace runara
