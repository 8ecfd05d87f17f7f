// The pure parts of the ssh engine: splitting a stream into lines with a bounded tail, and the
// remote bootstrap's preamble and marker.
#include "ssh/line_output.hpp"
#include "ssh/remote_command.hpp"
#include "ssh/host_key.hpp"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

using runara::ssh::LineOutput;

TEST_CASE("ssh line output: whole lines across chunk boundaries", "[ssh]") {
  LineOutput out;
  std::vector<std::string> lines;
  out.set_on_line([&](std::string_view l) { lines.emplace_back(l); });
  out.feed("ab");
  out.feed("c\nde");
  out.feed("f\n\ng");
  CHECK(lines == std::vector<std::string>{"abc", "def", ""});
  out.finish();
  CHECK(lines.back() == "g");
  CHECK(out.tail() == "abc\ndef\n\ng");
}

TEST_CASE("ssh line output: the tail and an endless line stay bounded", "[ssh]") {
  LineOutput out(10, 4);
  std::vector<std::string> lines;
  out.set_on_line([&](std::string_view l) { lines.emplace_back(l); });
  out.feed("0123456789abc");
  CHECK(lines == std::vector<std::string>{"0123", "4567", "89ab"});
  for (int i = 0; i < 100; ++i) out.feed("xyz\n");
  CHECK(out.tail() == "z\nxyz\nxyz\n");
  CHECK(out.total() == 413);
  CHECK(out.truncated());
}

TEST_CASE("ssh remote command: preamble, marker and quoting", "[ssh]") {
  using namespace runara::ssh;
  CHECK(shell_quote("it's") == "'it'\\''s'");
  const std::string p = preamble("echo hi", {{"TOKEN", "v'1"}}).value();
  const auto nl = p.find('\n');
  CHECK(std::stoul(p.substr(0, nl)) == p.size() - nl - 1);  // the length line counts the rest
  CHECK(p.find("export TOKEN='v'\\''1'\n") != std::string::npos);
  CHECK(bootstrap_command().find("TOKEN") == std::string::npos);
  CHECK_THAT(preamble("x", {{"1X", "v"}}).error(), Catch::Contains("env name '1X'"));
  CHECK_THAT(preamble("x", {{"", "v"}}).error(), Catch::Contains("env name ''"));
  CHECK(parse_pgid_marker("runara-pgid 1234") == 1234L);
  CHECK_FALSE(parse_pgid_marker("runara-pgid 12a"));
  CHECK_FALSE(parse_pgid_marker("runara-pgid "));
  CHECK_FALSE(parse_pgid_marker("hello"));
  CHECK(kill_group_command(42, "KILL") == "kill -s KILL -- -42 2>/dev/null; true");
}

TEST_CASE("ssh host key: base64 as OpenSSH writes fingerprints (no padding)", "[ssh]") {
  using runara::ssh::base64_unpadded;
  CHECK(base64_unpadded("") == "");
  CHECK(base64_unpadded("f") == "Zg");
  CHECK(base64_unpadded("fo") == "Zm8");
  CHECK(base64_unpadded("foo") == "Zm9v");
  CHECK(base64_unpadded("foob") == "Zm9vYg");
}

TEST_CASE("line output: a line longer than the limit is cut the same way however the stream is chunked", "[ssh]") {
  auto cut = [](const std::vector<std::string>& chunks) {
    std::vector<std::string> lines;
    runara::ssh::LineOutput out(1024, 4);
    out.set_on_line([&](std::string_view l) { lines.emplace_back(l); });
    for (const auto& c : chunks) out.feed(c);
    out.finish();
    return lines;
  };
  const std::vector<std::string> want = {"abcd", "efgh", "ij", "wxyz", "k"};
  CHECK(cut({"abcdefghij\nwxyz\nk"}) == want);  // fed whole: the long line still comes in pieces
  CHECK(cut({"abcdefghij", "\nwxyz", "\nk"}) == want);
  CHECK(cut({"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "\n", "w", "x", "y", "z", "\n", "k"}) == want);
}
