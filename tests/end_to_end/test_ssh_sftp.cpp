// SFTP transfers through the ssh engine against a real OpenSSH server on loopback: a 64 MiB
// file both ways with checksums and modes, a folder tree, progress, clear errors.
#include "child_process.hpp"
#include "loopback_fixtures.hpp"
#include "ssh_test_session.hpp"
#include "sshd_fixture.hpp"
#include "test_text.hpp"
#include "ssh/sftp_transfer.hpp"

#include <sys/stat.h>

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>

using runara::ssh::SftpTransfer;
using runara::ssh::SshSession;
using runara::ssh::TransferOptions;
using runara::ssh::TransferResult;
using runara::test::connect_session;
using runara::test::read_all;
using runara::test::run_tool;
using runara::test::SshdFixture;
using runara::test::sshd_options;
using runara_test::TestLoop;
using Direction = TransferOptions::Direction;

namespace {

TransferResult transfer(TestLoop& t, SshSession& session, TransferOptions options, double max_s = 60) {
  std::optional<TransferResult> result;
  auto tr = runara::test::must(SftpTransfer::start(session, std::move(options), [&](const TransferResult& r) { result = r; }));
  if (!t.run_until([&] { return result.has_value(); }, max_s)) FAIL("the transfer did not finish in time");
  return *result;
}

std::string sha256(const std::string& path) { return run_tool({"/usr/bin/sha256sum", path}).substr(0, 64); }

unsigned mode_of(const std::string& path) {
  struct stat st {};
  ::stat(path.c_str(), &st);
  return st.st_mode & 07777;
}

}  // namespace

TEST_CASE("ssh sftp: a 64 MiB file up and down, checksum and mode kept, progress reported", "[ssh]") {
  SshdFixture sshd;
  TestLoop t;
  const std::string dir = sshd.dir();
  run_tool({"/bin/sh", "-c", "head -c 67108864 /dev/urandom > " + dir + "/big && chmod 0751 " + dir + "/big"});
  {
    SshSession session(&t.loop, sshd_options(sshd));
    REQUIRE(connect_session(t, session) == "");
    TransferOptions up;
    up.local = dir + "/big";
    up.remote = dir + "/big.remote";
    std::uint64_t last_total = 0, calls = 0, size_seen = 0;
    bool monotonic = true;
    up.progress = [&](const std::string&, std::uint64_t, std::uint64_t size, std::uint64_t total) {
      monotonic = monotonic && total >= last_total;
      last_total = total;
      size_seen = size;
      ++calls;
    };
    const TransferResult r = transfer(t, session, up);
    CHECK(r.error == "");
    CHECK(r.bytes == 67108864);
    CHECK(r.files == 1);
    CHECK(monotonic);
    CHECK(last_total == 67108864);
    CHECK(size_seen == 67108864);
    CHECK(calls >= 8);  // 64 MiB in 4 MiB blocks at least
    CHECK(sha256(dir + "/big.remote") == sha256(dir + "/big"));
    CHECK(mode_of(dir + "/big.remote") == 0751);

    TransferOptions down;
    down.direction = Direction::Download;
    down.remote = dir + "/big.remote";
    down.local = dir + "/big.back";
    const TransferResult d = transfer(t, session, down);
    CHECK(d.error == "");
    CHECK(d.bytes == 67108864);
    CHECK(sha256(dir + "/big.back") == sha256(dir + "/big"));
    CHECK(mode_of(dir + "/big.back") == 0751);
  }
  CHECK(t.close() == 0);
}

TEST_CASE("ssh sftp: a folder tree up and down", "[ssh]") {
  SshdFixture sshd;
  TestLoop t;
  const std::string dir = sshd.dir();
  run_tool({"/bin/sh", "-c",
            "cd " + dir + " && mkdir -p tree/a/b tree/empty && echo one > tree/one && head -c 100000 /dev/urandom > "
            "tree/a/b/bin && printf '' > tree/a/zero && chmod 0700 tree/a && chmod 0755 tree/one"});
  {
    SshSession session(&t.loop, sshd_options(sshd));
    REQUIRE(connect_session(t, session) == "");
    const TransferResult up = transfer(t, session, {Direction::Upload, dir + "/tree", dir + "/tree.remote"});
    CHECK(up.error == "");
    CHECK(up.files == 3);
    const TransferResult down = transfer(t, session, {Direction::Download, dir + "/tree.back", dir + "/tree.remote"});
    CHECK(down.error == "");
    CHECK(down.files == 3);
    CHECK(down.bytes == 100004);
  }
  // Same files, same contents, same modes.
  const std::string listing = "cd " + dir + "/%s && find . -printf '%%p %%m %%s\\n' | sort && find . -type f | sort | xargs sha256sum";
  char a[512], b[512];
  std::snprintf(a, sizeof a, listing.c_str(), "tree");
  std::snprintf(b, sizeof b, listing.c_str(), "tree.back");
  CHECK(run_tool({"/bin/sh", "-c", a}) == run_tool({"/bin/sh", "-c", b}));
  CHECK(mode_of(dir + "/tree.remote/a") == 0700);
  CHECK(t.close() == 0);
}

TEST_CASE("ssh sftp: missing files are named in the error", "[ssh]") {
  SshdFixture sshd;
  TestLoop t;
  const std::string dir = sshd.dir();
  {
    SshSession session(&t.loop, sshd_options(sshd));
    REQUIRE(connect_session(t, session) == "");
    const TransferResult down = transfer(t, session, {Direction::Download, dir + "/x", dir + "/no-such-file"});
    CHECK(down.error == "cannot read '" + dir + "/no-such-file': no such file");
    const TransferResult up = transfer(t, session, {Direction::Upload, dir + "/no-such-local", dir + "/y"});
    CHECK(up.error == "cannot read '" + dir + "/no-such-local' (local): No such file or directory");
    const TransferResult deep = transfer(t, session, {Direction::Upload, sshd.user_key_path() + ".pub", dir + "/no/such/dir/f"});
    CHECK(deep.error == "cannot create '" + dir + "/no/such/dir/f': no such file");
    CHECK(session.ready());  // errors of one transfer leave the session usable
  }
  CHECK(t.close() == 0);
}

TEST_CASE("ssh sftp: uploads skip symlinks and refuse FIFOs", "[ssh]") {
  SshdFixture sshd;
  TestLoop t;
  const std::string dir = sshd.dir();
  run_tool({"/bin/sh", "-c",
            "cd " + dir + " && mkdir -p up && echo secret-outside > outside && echo mine > up/mine && "
            "ln -s " + dir + "/outside up/link && mkfifo fifo"});
  {
    SshSession session(&t.loop, sshd_options(sshd));
    REQUIRE(connect_session(t, session) == "");
    const TransferResult up = transfer(t, session, {Direction::Upload, dir + "/up", dir + "/up.remote"});
    CHECK(up.error == "");
    CHECK(up.files == 1);
    CHECK(run_tool({"/bin/sh", "-c", "cd " + dir + "/up.remote && ls -A && cat *"}) == "mine\nmine\n");
    // A FIFO would block the loop on open: refused at once instead.
    const TransferResult fifo = transfer(t, session, {Direction::Upload, dir + "/fifo", dir + "/fifo.remote"}, 10);
    CHECK(fifo.error == "cannot upload (not a regular file) '" + dir + "/fifo' (local): Invalid argument");
    CHECK(session.ready());
  }
  CHECK(t.close() == 0);
}

TEST_CASE("ssh sftp: a download never writes through a symlink planted in the destination", "[ssh]") {
  SshdFixture sshd;
  TestLoop t;
  const std::string dir = sshd.dir();
  run_tool({"/bin/sh", "-c",
            "cd " + dir + " && mkdir -p src/a outside dst && echo remote > src/a/f && echo remote > src/g && "
            "echo untouched > outside/g && ln -s " + dir + "/outside dst/a && ln -s " + dir + "/outside/g dst/g"});
  {
    SshSession session(&t.loop, sshd_options(sshd));
    REQUIRE(connect_session(t, session) == "");
    const TransferResult down = transfer(t, session, {Direction::Download, dir + "/dst", dir + "/src"});
    CHECK(down.error != "");
    INFO(down.error);
    CHECK(down.error.find("symlink") != std::string::npos);
    // A single-file download onto a symlink is refused too.
    const TransferResult one = transfer(t, session, {Direction::Download, dir + "/dst/g", dir + "/src/g"});
    CHECK(one.error.find("cannot write '" + dir + "/dst/g' (local)") == 0);
    CHECK(session.ready());
  }
  CHECK(run_tool({"/bin/sh", "-c", "cd " + dir + "/outside && ls -A && cat g"}) == "g\nuntouched\n");
  CHECK(t.close() == 0);
}

TEST_CASE("ssh sftp: a transfer destroyed while a block is read or written on the thread pool leaves nothing behind",
          "[ssh]") {
  SshdFixture sshd;
  TestLoop t;
  const std::string dir = sshd.dir();
  run_tool({"/bin/sh", "-c", "head -c 16777216 /dev/urandom > " + dir + "/src"});
  {
    SshSession session(&t.loop, sshd_options(sshd));
    REQUIRE(connect_session(t, session) == "");
    for (const auto direction : {Direction::Upload, Direction::Download}) {
      for (int iterations = 1; iterations <= 40; iterations += 3) {
        TransferOptions o;
        o.direction = direction;
        o.local = direction == Direction::Upload ? dir + "/src" : dir + "/back";
        o.remote = direction == Direction::Upload ? dir + "/remote" : dir + "/src";
        o.block_bytes = 1u << 20;
        bool done = false;
        auto tr = runara::test::must(SftpTransfer::start(session, o, [&](const TransferResult&) { done = true; }));
        for (int i = 0; i < iterations && !done; ++i) uv_run(&t.loop, UV_RUN_ONCE);
        tr.reset();  // mid-block, mid-open or finished: each must be safe (ASan checks the rest)
      }
    }
    // The session is still usable afterwards: a whole transfer goes through.
    TransferOptions whole;
    whole.local = dir + "/src";
    whole.remote = dir + "/remote2";
    CHECK(transfer(t, session, whole).error == "");
    CHECK(sha256(dir + "/remote2") == sha256(dir + "/src"));
  }
  CHECK(t.close() == 0);  // every request ended and every handle closed
}

TEST_CASE("ssh sftp: a download masks the secrets it is given, also a value split between two blocks", "[ssh]") {
  SshdFixture sshd;
  TestLoop t;
  const std::string dir = sshd.dir();
  const std::string token = "tok-5f3a9c0e1b2d4f68a7", key = "k3y!";
  const std::string token_mask(token.size(), '#'), key_mask(key.size(), '%');
  // Values close together over a dozen 32 KiB blocks: wherever the blocks end, most end inside
  // a value. The file also starts and ends with one.
  std::string text = token;
  for (int i = 0; text.size() < 400000; ++i) {
    text += std::string(7 + i % 13, static_cast<char>('a' + i % 26));
    text += i % 3 == 0 ? key : token;
  }
  text += token;
  std::string expected = text;
  for (const auto& [value, mask] : {std::pair{token, token_mask}, std::pair{key, key_mask}}) {
    for (auto at = expected.find(value); at != std::string::npos; at = expected.find(value, at + value.size()))
      expected.replace(at, value.size(), mask);
  }
  REQUIRE(expected != text);
  std::ofstream(dir + "/secrets.txt") << text;
  run_tool({"/bin/sh", "-c", "head -c 3000000 /dev/urandom > " + dir + "/noise"});
  {
    SshSession session(&t.loop, sshd_options(sshd));
    REQUIRE(connect_session(t, session) == "");
    TransferOptions o;
    o.direction = Direction::Download;
    o.block_bytes = 32768;
    o.mask = runara::SecretMask({{token, token_mask}, {key, key_mask}});
    o.remote = dir + "/secrets.txt";
    o.local = dir + "/secrets.back";
    const TransferResult r = transfer(t, session, o);
    CHECK(r.error == "");
    CHECK(r.bytes == text.size());
    const std::string back = read_all(dir + "/secrets.back");
    CHECK(back.size() == expected.size());
    CHECK(back == expected);
    CHECK(back.find(token) == std::string::npos);

    // Nothing to mask: the bytes arrive as they are, through the same held-back tails.
    o.remote = dir + "/noise";
    o.local = dir + "/noise.back";
    CHECK(transfer(t, session, o).error == "");
    CHECK(sha256(dir + "/noise.back") == sha256(dir + "/noise"));
  }
  CHECK(t.close() == 0);
}
