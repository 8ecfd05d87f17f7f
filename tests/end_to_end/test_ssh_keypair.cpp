// The per-run SSH key (runtime/cloud/ssh_keypair.*) checked against independent readers:
// OpenSSH's ssh-keygen (public key, fingerprints) and a real sshd that lets it in via libssh2.
#include <sys/stat.h>

#include <fstream>
#include <string>

#include <catch2/catch.hpp>

#include "cloud/ssh_keypair.hpp"
#include "loopback_fixtures.hpp"
#include "ssh_test_session.hpp"
#include "sshd_fixture.hpp"

using namespace runara;
using namespace runara::test;

namespace {

std::string write_key_file(const std::string& dir, const std::string& text) {
  const std::string path = dir + "/id_ed25519";
  std::ofstream(path) << text;
  ::chmod(path.c_str(), 0600);  // ssh-keygen refuses a private key others may read
  return path;
}

std::string first_word_pair(const std::string& line) {  // "type base64" without the comment
  const auto second_space = line.find(' ', line.find(' ') + 1);
  return line.substr(0, second_space);
}

}  // namespace

TEST_CASE("ssh keypair: OpenSSH reads the private key and derives the same public key and fingerprints",
          "[ssh][droplet]") {
  const SshKeyPair pair = make_ed25519_keypair("runara-test").value();
  CHECK(pair.public_line.rfind("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI", 0) == 0);
  CHECK(pair.public_line.substr(pair.public_line.size() - 12) == " runara-test");
  CHECK(pair.private_openssh.rfind("-----BEGIN OPENSSH PRIVATE KEY-----\n", 0) == 0);
  CHECK(pair.md5_fingerprint.size() == 47);  // 16 bytes as colon hex
  SshdFixture sshd(false);                    // only for its private temp folder
  const std::string path = write_key_file(sshd.dir(), pair.private_openssh);

  const std::string derived = run_tool({"/usr/bin/ssh-keygen", "-y", "-f", path});
  CHECK(first_word_pair(derived) == first_word_pair(pair.public_line));
  const std::string md5 = run_tool({"/usr/bin/ssh-keygen", "-l", "-E", "md5", "-f", path});
  CHECK(md5.find("MD5:" + pair.md5_fingerprint) != std::string::npos);
  const std::string sha = run_tool({"/usr/bin/ssh-keygen", "-l", "-E", "sha256", "-f", path});
  CHECK(sha.find(pair.sha256_fingerprint) != std::string::npos);
}

TEST_CASE("ssh keypair: two keys differ", "[ssh][droplet]") {
  CHECK(make_ed25519_keypair("a")->public_line != make_ed25519_keypair("a")->public_line);
}

TEST_CASE("ssh keypair: a real sshd lets the generated key in through the ssh engine", "[ssh][droplet]") {
  const SshKeyPair pair = make_ed25519_keypair("runara-test").value();
  SshdFixture sshd(false);
  std::ofstream(sshd.dir() + "/authorized_keys", std::ios::trunc) << pair.public_line << "\n";
  sshd.start();
  runara_test::TestLoop t;
  auto options = sshd_options(sshd);
  options.private_key = pair.private_openssh;
  {
    ssh::SshSession session(&t.loop, options);
    REQUIRE(connect_session(t, session) == "");
    CHECK(session.ready());
  }
  CHECK(t.close() == 0);
}
