// Bidi controls and zero-width characters made visible (issue 36), end to end: a script's name,
// its print, its log lines, its error, its results folder and its report's names reach the
// terminal, run.log, `runara runs`, `runara plan`, report.md and report.html as <U+202E>, never as
// the raw character that would make "evil<U+202E>gpj.lua" read as "evilaul.jpg" (the rule
// itself: tests/unit/test_hidden_characters.cpp; droplet names in `ls` and `reap`:
// test_reap_ownership.cpp). And the reports' Lua copy of the set (runara.hidden_characters)
// escapes exactly what the terminal's visible() does, over every character of the BMP.
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <string>

#include "child_process.hpp"
#include "test_text.hpp"

using runara::test::contains;
using runara::test::read_all;

namespace {

// The set's characters in UTF-8 (runtime/base/hidden_characters.cpp).
const char* const kHiddenBytes[] = {
    "\xd8\x9c",     "\xe2\x80\x8e", "\xe2\x80\x8f", "\xe2\x80\xaa", "\xe2\x80\xab", "\xe2\x80\xac",
    "\xe2\x80\xad", "\xe2\x80\xae", "\xe2\x81\xa6", "\xe2\x81\xa7", "\xe2\x81\xa8", "\xe2\x81\xa9",
    "\xc2\xad",     "\xe2\x80\x8b", "\xe2\x80\x8c", "\xe2\x80\x8d", "\xe2\x81\xa0", "\xe2\x81\xa1",
    "\xe2\x81\xa2", "\xe2\x81\xa3", "\xe2\x81\xa4", "\xef\xbb\xbf",
};

void check_no_hidden(const std::string& text) {
  for (const char* bytes : kHiddenBytes) CHECK_FALSE(contains(text, bytes));
}

// The Trojan Source name: reads as "evilaul.jpg" where the RLO is obeyed.
const std::string kScriptName = "evil\xe2\x80\xaegpj.lua";

}  // namespace

TEST_CASE("a script's name, print, log lines, error and results folder: hidden characters shown as <U+XXXX> on the "
          "terminal, in run.log and in runara runs", "[cli][terminal]") {
  const std::string dir = runara::test::temp_dir("hidden-characters");
  const std::string out = dir + "/out\xe2\x80\x8b";
  const std::map<std::string, std::string> env{{"RUNARA_STATE_DIR", dir + "/state"}};
  const std::string script = runara::test::write_temp_file(dir, kScriptName, R"lua(
print("print: evil\226\128\174gpj.lua zero\226\128\139width")
runara.log("log: \226\129\166isolate\226\129\169 \239\187\191bom")
error("error: soft\194\173hyphen \216\156alm", 0)
)lua");
  const auto r = runara::test::run_runara({"--out", out, script}, 30, env);
  const std::string log = read_all(out + "/run.log");
  const auto runs = runara::test::run_runara({"runs"}, 30, env);
  INFO("stdout:\n" << r.out << "\nstderr:\n" << r.err << "\nrun.log:\n" << log << "\nruns:\n" << runs.out << runs.err);
  CHECK(r.exit_code == 1);
  CHECK(runs.exit_code == 0);
  for (const std::string* text : {&r.out, &r.err, &log, &runs.out}) check_no_hidden(*text);
  CHECK(contains(r.out, "print: evil<U+202E>gpj.lua zero<U+200B>width\n"));
  for (const std::string* text : {&r.err, &log}) {
    CHECK(contains(*text, "log: <U+2066>isolate<U+2069> <U+FEFF>bom\n"));
    CHECK(contains(*text, "error: soft<U+00AD>hyphen <U+061C>alm"));
  }
  CHECK(contains(r.err, "runara: results in " + dir + "/out<U+200B>/\n"));
  CHECK(contains(runs.out, dir + "/evil<U+202E>gpj.lua "));
}

TEST_CASE("runara plan: a script's name and error with hidden characters shown as <U+XXXX>", "[cli][terminal]") {
  const std::string dir = runara::test::temp_dir("hidden-characters");
  const std::string script =
      runara::test::write_temp_file(dir, kScriptName, "error('stopped \\226\\128\\174reversed')\n");
  const auto r = runara::test::run_runara({"plan", script}, 60);
  INFO("stdout:\n" << r.out << "\nstderr:\n" << r.err);
  CHECK(r.exit_code == 1);
  check_no_hidden(r.out + r.err);
  CHECK(contains(r.out, "Plan for " + dir + "/evil<U+202E>gpj.lua"));
  CHECK(contains(r.out, "stopped <U+202E>reversed"));
}

TEST_CASE("report.md and report.html: hidden characters in a report's names shown as <U+XXXX>", "[cli][report]") {
  const std::string dir = runara::test::temp_dir("hidden-characters");
  const std::string out = dir + "/out";
  const std::string script = runara::test::write_temp_file(dir, "report.lua", R"lua(
local report = require("runara.report")
local rep = report.new{ title = "title \226\128\174gpj" }
rep:metadata{ gpu = "GPU\226\128\139X" }
rep:add_load("load \226\129\167rtl", { label = "x", completed = 4, failed = 0, num_prompts = 4, max_concurrency = 1,
  output_throughput = 100, median_ttft_ms = 50 }, { kind = "throughput" })
rep:add_table("table \239\187\191bom", { columns = { "column \226\128\141zwj" }, rows = { { "cell \216\156alm" } } })
print(rep:summary(rep:write()))
)lua");
  const auto r = runara::test::run_runara({"--out", out, script}, 30);
  const std::string md = read_all(out + "/report.md");
  const std::string html = read_all(out + "/report.html");
  INFO("stdout:\n" << r.out << "\nstderr:\n" << r.err << "\nreport.md:\n" << md);
  CHECK(r.exit_code == 0);
  for (const std::string* text : {&r.out, &r.err, &md, &html}) check_no_hidden(*text);
  for (const std::string* text : {&md, &html}) {
    CHECK(contains(*text, "title &lt;U+202E&gt;gpj"));
    CHECK(contains(*text, "GPU&lt;U+200B&gt;X"));
    CHECK(contains(*text, "load &lt;U+2067&gt;rtl"));
    CHECK(contains(*text, "table &lt;U+FEFF&gt;bom"));
    CHECK(contains(*text, "column &lt;U+200D&gt;zwj"));
    CHECK(contains(*text, "cell &lt;U+061C&gt;alm"));
  }
}

TEST_CASE("the reports' escaping (report_format.controls) and the terminal's (visible) agree on every BMP character",
          "[cli][report]") {
  const std::string dir = runara::test::temp_dir("hidden-characters");
  // Every code point up to U+FFFF but the line feed and the surrogates, then a few beyond (an
  // emoji, a tag character, the last code point): printed as they are, which runara makes
  // visible, and written to a file through the reports' controls() (a file: print would make
  // what controls() left visible too, hiding the difference).
  const std::string script = runara::test::write_temp_file(dir, "agree.lua", R"lua(
local format = require("runara.report_format")
local function utf8(cp)
  if cp < 0x80 then return string.char(cp) end
  if cp < 0x800 then return string.char(0xC0 + math.floor(cp / 0x40), 0x80 + cp % 0x40) end
  if cp < 0x10000 then
    return string.char(0xE0 + math.floor(cp / 0x1000), 0x80 + math.floor(cp / 0x40) % 0x40, 0x80 + cp % 0x40)
  end
  return string.char(0xF0 + math.floor(cp / 0x40000), 0x80 + math.floor(cp / 0x1000) % 0x40,
                     0x80 + math.floor(cp / 0x40) % 0x40, 0x80 + cp % 0x40)
end
local parts = {}
for cp = 0, 0xFFFF do
  if cp ~= 10 and (cp < 0xD800 or cp > 0xDFFF) then parts[#parts + 1] = utf8(cp) end
end
for _, cp in ipairs({ 0x1F600, 0xE0067, 0xE007F, 0x10FFFF }) do parts[#parts + 1] = utf8(cp) end
local all = table.concat(parts, " ")
print(all)
runara.write_file("controls.txt", format.controls(all) .. "\n")
)lua");
  const auto r = runara::test::run_runara({"--out", dir + "/out", script}, 60);
  REQUIRE(r.exit_code == 0);
  const std::string terminal = r.out, report = read_all(dir + "/out/controls.txt");
  const auto at = static_cast<std::size_t>(
      std::mismatch(terminal.begin(), terminal.end(), report.begin(), report.end()).first - terminal.begin());
  INFO("the first difference, at byte " << at << ": visible() wrote '" << terminal.substr(at, 40)
                                        << "', controls() '" << report.substr(at, 40) << "'");
  CHECK(at == terminal.size());  // numbers, not two 250 kB strings, when they differ
  CHECK(report.size() == terminal.size());
  CHECK(contains(terminal, " <U+202E> "));
  CHECK(contains(terminal, " \xe2\x81\xa5 "));  // U+2065, unassigned: as it is on both sides
}
