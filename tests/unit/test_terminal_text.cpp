// Terminal and log injection (issue 25), the rule itself: text from a script, a machine or a
// server is made visible before it reaches the terminal or run.log (base/text.hpp's visible():
// control bytes as cat -v shows them), later lines of a log entry are indented so none can pass
// for a forged "[   0.001] ..." line, and pretty_value writes a string's control bytes as Lua
// escapes. The real `runara` on attack scripts: tests/end_to_end/test_terminal_output.cpp.
#include <catch2/catch.hpp>

#include <string>

#include <lua.hpp>

#include "base/text.hpp"
#include "script/pretty.hpp"

using runara::LineFeeds;
using runara::visible;

TEST_CASE("visible: control bytes as cat -v shows them, tab and UTF-8 kept", "[text]") {
  CHECK(visible("plain text, tab\there") == "plain text, tab\there");
  CHECK(visible("\x1b]52;c;ZXZpbA==\x07") == "^[]52;c;ZXZpbA==^G");
  CHECK(visible("\x1b]0;title\x07") == "^[]0;title^G");
  CHECK(visible("\x1b[2J\x1b[H") == "^[[2J^[[H");
  CHECK(visible("50%\roverwritten") == "50%^Moverwritten");
  CHECK(visible(std::string("nul\0bs\b del\x7f", 12)) == "nul^@bs^H del^?");
  CHECK(visible("two\nlines") == "two\nlines");
  CHECK(visible("two\nlines", LineFeeds::show) == "two^Jlines");
  // C1 controls: U+009B (CSI) in UTF-8, and a stray 0x9B byte; other UTF-8 untouched.
  CHECK(visible("a\xc2\x9b" "2Jb") == "aM-^[2Jb");
  CHECK(visible("a\x9b" "2Jb") == "aM-^[2Jb");
  CHECK(visible("\xc2\xb5s \xe2\x80\x94 \xf0\x9f\x98\x80 \xc4\x9b") == "\xc2\xb5s \xe2\x80\x94 \xf0\x9f\x98\x80 \xc4\x9b");
  // Bytes that begin no UTF-8 character pass as they are unless they are C1 controls.
  CHECK(visible("\xff\xc3(") == "\xff\xc3(");
  CHECK(visible("\xe2\x80") == "\xe2M-^@");  // a cut character: its 0x80 is stray
  std::string text = "plain \xc2\xb5s\n";
  CHECK_FALSE(runara::make_visible(text));
  CHECK(text == "plain \xc2\xb5s\n");
  text = "bell\a";
  CHECK(runara::make_visible(text));
  CHECK(text == "bell^G");
}

TEST_CASE("indent_continuations: later lines of an entry start with spaces", "[text]") {
  CHECK(runara::indent_continuations("one", 4) == "one");
  CHECK(runara::indent_continuations("one\n[   0.001] two\nthree", 4) == "one\n    [   0.001] two\n    three");
}

TEST_CASE("pretty_value: a string's control bytes are written as Lua escapes", "[pretty_value]") {
  lua_State* L = luaL_newstate();
  lua_pushstring(L, "a\x1b]0;t\x07\r\n\tb");
  CHECK(runara::pretty_value(L, -1) == "\"a\\027]0;t\\007\\r\\n\tb\"");
  lua_close(L);
}
