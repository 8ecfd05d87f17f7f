#include "ssh/login_plan.hpp"

#include <arpa/inet.h>
#include <sys/stat.h>

#include <cctype>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <vector>

namespace runara::ssh {

namespace {

bool numeric_address(const std::string& host) {
  unsigned char buf[16];
  return inet_pton(AF_INET, host.c_str(), buf) == 1 || inet_pton(AF_INET6, host.c_str(), buf) == 1;
}

// A DNS name as getaddrinfo takes it: labels of letters, digits and '-', not starting or ending
// with '-', joined by '.'; nothing a resolver or a log line could read another way.
bool host_name(const std::string& host) {
  if (host.empty() || host.size() > 253) return false;
  std::size_t label = 0;
  for (std::size_t i = 0; i <= host.size(); ++i) {
    const char c = i < host.size() ? host[i] : '.';
    if (c == '.') {
      if (label == 0 || label > 63 || host[i - 1] == '-') return false;
      label = 0;
    } else if (std::isalnum(static_cast<unsigned char>(c)) || (c == '-' && label > 0)) {
      ++label;
    } else {
      return false;
    }
  }
  return true;
}

// "HOST", "HOST:PORT", "[V6]:PORT" -> host and port (0: none given).
Result<HostPort> split_host(const std::string& target) {
  HostPort out;
  std::string rest = target;
  if (!rest.empty() && rest[0] == '[') {
    const auto close = rest.find(']');
    if (close == std::string::npos) return Error{"target '" + target + "' has '[' without ']'"};
    out.host = rest.substr(1, close - 1);
    rest = rest.substr(close + 1);
    if (rest.empty()) return out;
    if (rest[0] != ':') return Error{"target '" + target + "': expected ':PORT' after ']'"};
    rest = rest.substr(1);
  } else {
    const auto colon = rest.find(':');
    if (colon == std::string::npos || rest.find(':', colon + 1) != std::string::npos) {
      out.host = rest;  // no port, or a bare IPv6 address
      return out;
    }
    out.host = rest.substr(0, colon);
    rest = rest.substr(colon + 1);
  }
  char* end = nullptr;
  const long p = std::strtol(rest.c_str(), &end, 10);
  if (rest.empty() || *end || p < 1 || p > 65535) return Error{"target '" + target + "': the port must be a number from 1 to 65535"};
  out.port = static_cast<int>(p);
  return out;
}

// The user's SSH agent (SSH_AUTH_SOCK), when it names a socket: "" when there is none.
std::string user_agent_socket() {
  const char* sock = std::getenv("SSH_AUTH_SOCK");
  struct stat st {};
  if (sock == nullptr || *sock == '\0' || ::stat(sock, &st) != 0 || !S_ISSOCK(st.st_mode)) return "";
  return sock;
}

}  // namespace

Result<HostPort> parse_target(const std::string& target) {
  auto split = split_host(target);
  if (split && !numeric_address(split->host) && !host_name(split->host))
    return Error{"target '" + target + "': expected an IP address or a host name (letters, digits, '-' and '.', "
                 "at most 253 characters)"};
  return split;
}

bool key_is_encrypted(const std::string& pem) {
  if (pem.find("ENCRYPTED") != std::string::npos) return true;  // PEM: Proc-Type / PKCS#8
  const std::string begin = "-----BEGIN OPENSSH PRIVATE KEY-----";
  const auto at = pem.find(begin);
  if (at == std::string::npos) return false;
  std::string b64;
  for (std::size_t i = at + begin.size(); i < pem.size() && b64.size() < 64; ++i)
    if (std::isalnum(static_cast<unsigned char>(pem[i])) || pem[i] == '+' || pem[i] == '/') b64 += pem[i];
  static const std::string abc = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string raw;
  unsigned acc = 0;
  int bits = 0;
  for (char c : b64) {
    acc = acc << 6 | static_cast<unsigned>(abc.find(c));
    if ((bits += 6) >= 8) raw += static_cast<char>((acc >> (bits -= 8)) & 0xff);
  }
  // "openssh-key-v1\0", then the cipher name as a length-prefixed string: "none" when clear.
  const std::size_t name_at = 15 + 4;
  return raw.size() >= name_at + 4 && raw.compare(name_at, 4, "none") != 0;
}

Status user_keys(SessionOptions& options, const std::string& given, const std::string& name) {
  options.agent_socket = user_agent_socket();
  const bool agent = !options.agent_socket.empty();
  std::vector<std::string> candidates;
  if (!given.empty()) {
    candidates.push_back(given);
  } else if (const char* home = std::getenv("HOME"); home && *home) {
    for (const char* file : {"id_ed25519", "id_ecdsa", "id_rsa"}) candidates.push_back(std::string(home) + "/.ssh/" + file);
  }
  for (const auto& path : candidates) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
      if (!given.empty()) return Error{"cannot read the key given with --ssh-key ('" + path + "')", true};
      continue;
    }
    std::stringstream text;
    text << in.rdbuf();
    if (key_is_encrypted(text.str())) {
      if (agent) continue;
      return Error{"the key '" + path + "' is encrypted with a passphrase, and runara cannot ask for it: load it into "
                   "an SSH agent (ssh-add, with SSH_AUTH_SOCK set) or pass an unencrypted key with --ssh-key PATH", true};
    }
    options.private_key = text.str();
    return {};
  }
  if (!agent)
    return Error{"no key to log in to " + name + " with: pass --ssh-key PATH (the private key that logs in there), or "
                 "start an SSH agent holding it (SSH_AUTH_SOCK); runara looked for ~/.ssh/id_ed25519, id_ecdsa and id_rsa",
                 true};
  return {};
}

}  // namespace runara::ssh
