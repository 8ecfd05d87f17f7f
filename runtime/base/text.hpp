// Small text helpers every layer needs. Pure functions, any thread.
#pragma once

#include <string>
#include <string_view>

namespace runara {

// `s` without leading and trailing ASCII whitespace (space, tab, CR, LF).
std::string_view trim(std::string_view s);
// At most `max` bytes of `text` with control bytes (NUL and terminal escapes included) made '?':
// text another machine sent, fit for an error message or a terminal.
std::string printable(std::string_view text, std::size_t max);
// How visible() writes a line feed: kept (text that may span lines: print, a log entry) or shown
// as ^J (text that must stay on one line: a name, a progress line).
enum class LineFeeds { keep, show };
// `text` with nothing left that a terminal would act on, for a terminal or a log line (the rule of
// docs/cli.md, "Output": machine output, print, script-chosen names and server text reach the
// terminal and run.log through it). Control bytes are written as `cat -v` shows them: ESC as ^[,
// CR as ^M, BEL as ^G, NUL as ^@, DEL as ^?; the C1 controls (U+0080..U+009F in UTF-8, and a
// stray byte 0x80..0x9F that begins no UTF-8 character), which some terminals obey as ESC
// sequences, as cat -v's M-^[ for 0x9B and so on. The characters that show nothing yet change how
// the text around them reads (bidi controls such as U+202E, zero-width ones such as U+200B; the
// set: hidden_characters.hpp) as <U+202E>, whole UTF-8 characters only. Tab stays; a line feed as
// `line_feeds` says. Everything else, other UTF-8 included, is unchanged (bytes that are not
// UTF-8 too, but for the stray C1 ones); text without such bytes comes back as is. Linear, any
// thread.
std::string visible(std::string_view text, LineFeeds line_feeds = LineFeeds::keep);
// The same in place: `text` is left as it is, not copied, when nothing in it needs escaping (a
// big print costs no second buffer). True when it changed.
bool make_visible(std::string& text, LineFeeds line_feeds = LineFeeds::keep);
// `text` with each line after the first indented by `indent` spaces: the continuation lines of one
// log entry, so that no line of it starts where a log line's "[   1.234] " stamp does.
std::string indent_continuations(std::string_view text, std::size_t indent);
// Percent-encoding of everything but RFC 3986's unreserved characters (A-Z a-z 0-9 - . _ ~).
std::string url_encode(std::string_view s);

}  // namespace runara
