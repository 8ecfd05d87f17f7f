// The Unicode characters that show nothing themselves yet change how the text around them reads:
// the bidi controls of a "Trojan Source" name (CVE-2021-42574) and the zero-width ones that make
// two different names look alike. visible() (text.hpp) writes each as <U+202E>, so a script's
// name, its output, a machine's line or a server's text cannot pass for something else on the
// terminal, in run.log or in `runara runs`. The reports keep the same set in Lua
// (stdlib/runara/hidden_characters.lua); tests/end_to_end/test_hidden_characters_output.cpp
// checks that both sides escape exactly the same characters.
//
// Contract. Pure, any thread.
#pragma once

#include <string>

namespace runara {

// Whether `code_point` is one of them (the set and why: hidden_characters.cpp).
bool is_hidden_character(char32_t code_point);
// How one is shown: "<U+202E>" (upper-case hex, at least four digits, as Unicode names them).
std::string code_point_label(char32_t code_point);

}  // namespace runara
