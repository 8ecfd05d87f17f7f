// The ssh engine's session against a real OpenSSH server on loopback: handshake, host key
// check, public-key auth, retries while sshd is not up, and clear errors.
#include "loopback_fixtures.hpp"
#include "ssh_test_session.hpp"
#include "sshd_fixture.hpp"

#include <catch2/catch.hpp>

#include <chrono>
#include <memory>

using runara::ssh::HostKey;
using runara::ssh::SshSession;
using runara::test::connect_session;
using runara::test::SshdFixture;
using runara::test::sshd_options;
using runara_test::Clock;
using runara_test::seconds_since;
using runara_test::TestLoop;

TEST_CASE("ssh session: connects, sees the host key as ssh-keygen prints it, closes", "[ssh]") {
  SshdFixture sshd;
  TestLoop t;
  auto options = sshd_options(sshd);
  HostKey seen;
  options.accept_host_key = [&](const HostKey& key) {
    seen = key;
    return true;
  };
  {
    SshSession session(&t.loop, options);
    REQUIRE(connect_session(t, session) == "");
    CHECK(session.ready());
    CHECK(seen.fingerprint == sshd.host_key_fingerprint());
    CHECK(seen.type == "ssh-ed25519");
    CHECK(seen.blob.size() == 51);  // string "ssh-ed25519" + string of 32 key bytes
    bool closed = false;
    session.close([&](runara::Status e) {
      CHECK(e.ok());
      closed = true;
    });
    REQUIRE(t.run_until([&] { return closed; }, 5));
    CHECK(session.state() == SshSession::State::Closed);
  }
  CHECK(t.close() == 0);
}

TEST_CASE("ssh session: a private key file works as well as one in memory", "[ssh]") {
  SshdFixture sshd;
  TestLoop t;
  auto options = sshd_options(sshd);
  options.private_key.clear();
  options.private_key_path = sshd.user_key_path();
  {
    SshSession session(&t.loop, options);
    CHECK(connect_session(t, session) == "");
  }
  CHECK(t.close() == 0);
}

TEST_CASE("ssh session: a key the server does not know fails at once with a clear error", "[ssh]") {
  SshdFixture sshd;
  TestLoop t;
  auto options = sshd_options(sshd);
  options.private_key = sshd.other_key_pem();
  const auto t0 = Clock::now();
  {
    SshSession session(&t.loop, options);
    const std::string error = connect_session(t, session);
    CHECK(error.find("cannot connect to " + sshd.user() + "@127.0.0.1:" + std::to_string(sshd.port())) == 0);
    CHECK(error.find("refused the key for user '" + sshd.user() + "'") != std::string::npos);
    CHECK(error.find("PRIVATE KEY") == std::string::npos);  // no key material in errors
    CHECK(session.attempts() == 1);  // not retried: retrying cannot help
  }
  CHECK(seconds_since(t0) < 5);
  CHECK(t.close() == 0);
}

TEST_CASE("ssh session: garbage instead of a key is reported as an unusable key", "[ssh]") {
  SshdFixture sshd;
  TestLoop t;
  auto options = sshd_options(sshd);
  options.private_key = "-----BEGIN OPENSSH PRIVATE KEY-----\nnot a key\n-----END OPENSSH PRIVATE KEY-----\n";
  {
    SshSession session(&t.loop, options);
    const std::string error = connect_session(t, session);
    INFO(error);
    CHECK(error.find("private key could not be used") != std::string::npos);
    CHECK(session.attempts() == 1);
  }
  CHECK(t.close() == 0);
}

TEST_CASE("ssh session: a changed host key is refused", "[ssh]") {
  SshdFixture sshd;
  TestLoop t;
  const auto options = sshd_options(sshd);  // pins the first host key
  {
    SshSession first(&t.loop, options);
    REQUIRE(connect_session(t, first) == "");
  }
  const std::string old_fingerprint = sshd.host_key_fingerprint();
  sshd.replace_host_key();
  REQUIRE(sshd.host_key_fingerprint() != old_fingerprint);
  {
    SshSession second(&t.loop, options);
    const std::string error = connect_session(t, second);
    CHECK(error.find("the host key " + sshd.host_key_fingerprint() + " (ssh-ed25519) was refused") !=
          std::string::npos);
    CHECK(second.attempts() == 1);
    CHECK_FALSE(second.ready());
  }
  CHECK(t.close() == 0);
}

TEST_CASE("ssh session: connect retries until sshd comes up", "[ssh]") {
  SshdFixture sshd(false);
  TestLoop t;
  auto options = sshd_options(sshd);
  std::vector<std::string> retries;
  options.on_retry = [&](const std::string& status) { retries.push_back(status); };
  uv_timer_t later;
  uv_timer_init(&t.loop, &later);
  later.data = &sshd;
  uv_timer_start(&later, [](uv_timer_t* h) { static_cast<SshdFixture*>(h->data)->start(); }, 1500, 0);
  {
    SshSession session(&t.loop, options);
    const auto t0 = Clock::now();
    CHECK(connect_session(t, session) == "");
    CHECK(seconds_since(t0) >= 1.4);
    CHECK(session.attempts() >= 3);
    REQUIRE_FALSE(retries.empty());
    CHECK(retries.front().find("waiting for SSH on") == 0);
    CHECK(retries.front().find("Connection refused") != std::string::npos);
  }
  uv_close(reinterpret_cast<uv_handle_t*>(&later), nullptr);
  CHECK(t.close() == 0);
}

TEST_CASE("ssh session: gives up at the timeout with the last error", "[ssh]") {
  TestLoop t;
  runara::ssh::SessionOptions options;
  options.address = "127.0.0.1";
  options.port = runara::test::unused_loopback_port();
  options.private_key = "unused";
  options.connect_timeout_s = 1.5;
  options.accept_host_key = [](const HostKey&) { return true; };
  const auto t0 = Clock::now();
  {
    SshSession session(&t.loop, options);
    const std::string error = connect_session(t, session);
    CHECK(error.find("TCP connect: Connection refused (gave up after") != std::string::npos);
    CHECK(error.find("within 1.5 s)") != std::string::npos);
    CHECK(session.attempts() >= 2);
  }
  CHECK(seconds_since(t0) < 3);
  CHECK(t.close() == 0);
}

TEST_CASE("ssh session: a host name is looked up (each attempt), and a name that does not exist fails at once", "[ssh]") {
  SshdFixture sshd;
  TestLoop t;
  auto options = sshd_options(sshd);
  options.address = "localhost";
  {
    SshSession session(&t.loop, options);
    CHECK(connect_session(t, session) == "");
    CHECK(session.ready());
    CHECK(session.where() == sshd.user() + "@localhost:" + std::to_string(sshd.port()));
  }
  options.address = "no-such-host.invalid";
  options.connect_timeout_s = 20;
  const auto t0 = std::chrono::steady_clock::now();
  {
    SshSession session(&t.loop, options);
    const std::string error = connect_session(t, session);
    CHECK(error.find("cannot resolve the host name 'no-such-host.invalid'") != std::string::npos);
    CHECK(session.attempts() == 1);  // not worth retrying for 20 s
  }
  CHECK(seconds_since(t0) < 10);
  CHECK(t.close() == 0);
}

TEST_CASE("ssh session: destroyed while its host name is being looked up, nothing is left behind", "[ssh]") {
  TestLoop t;
  runara::ssh::SessionOptions options;
  options.address = "localhost";
  options.accept_host_key = [](const HostKey&) { return true; };
  for (int i = 0; i < 20; ++i) {
    auto session = std::make_unique<SshSession>(&t.loop, options);
    session->connect([](runara::Status) {});
    session.reset();  // the lookup is still on the thread pool (or just done): its callback must not see us
  }
  CHECK(t.close() == 0);  // every handle and request finished (ASan: nothing freed is touched)
}

TEST_CASE("ssh session: an encrypted key needs its passphrase, and says so without it", "[ssh]") {
  SshdFixture sshd;
  TestLoop t;
  const std::string key = sshd.dir() + "/encrypted_key";
  runara::test::run_tool({"/usr/bin/ssh-keygen", "-q", "-t", "ed25519", "-N", "pass phrase 1", "-f", key});
  runara::test::run_tool({"/bin/sh", "-c", "cat " + key + ".pub >> " + sshd.dir() + "/authorized_keys"});
  auto options = sshd_options(sshd);
  options.private_key.clear();
  options.private_key_path = key;
  {
    SshSession without(&t.loop, options);
    const std::string error = connect_session(t, without);
    CHECK(error.find("the private key could not be used (unreadable, unsupported or wrong passphrase") != std::string::npos);
    CHECK(error.find("pass phrase 1") == std::string::npos);
    CHECK(without.attempts() == 1);
  }
  options.passphrase = "pass phrase 1";
  {
    SshSession with(&t.loop, options);
    CHECK(connect_session(t, with) == "");
  }
  CHECK(t.close() == 0);
}
