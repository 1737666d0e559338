#include "protocol/inferior_args.hpp"

namespace protocol {
namespace {

bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; }

// What a POSIX shell treats specially outside quotes.
constexpr std::string_view kShellSpecial = "\"!#$&*()\\|[]{}<>?'`~^; \t\n";

}  // namespace

std::vector<std::string> split_inferior_args(std::string_view line) {
  constexpr std::string_view kEscapedInDoubleQuotes = "$`\"\\\n";
  std::vector<std::string> out;
  std::string word;
  bool in_word = false;
  bool escaped = false;  // the character before was an escaping backslash
  char quote = 0;        // the open quote, if any
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (escaped) {
      escaped = false;
      if (c != '\n') {  // a backslash-newline joins lines
        word += c;
      }
    } else if (c == '\\' && quote != '\'' &&
               (quote != '"' || i + 1 == line.size() || kEscapedInDoubleQuotes.find(line[i + 1]) != std::string_view::npos)) {
      escaped = true;
      in_word = true;
    } else if (quote != 0) {
      if (c == quote) {
        quote = 0;
      } else {
        word += c;
      }
    } else if (c == '\'' || c == '"') {
      quote = c;
      in_word = true;
    } else if (is_blank(c)) {
      if (in_word) {
        out.push_back(std::move(word));
        word.clear();
        in_word = false;
      }
    } else {
      word += c;
      in_word = true;
    }
  }
  if (in_word) {
    out.push_back(std::move(word));
  }
  return out;
}

std::string join_inferior_args(const std::vector<std::string>& args) {
  std::string out;
  for (const auto& arg : args) {
    if (!out.empty()) {
      out += ' ';
    }
    if (arg.empty()) {
      out += "''";
      continue;
    }
    for (char c : arg) {
      if (c == '\n') {
        out += "'\n'";  // a backslash-newline would vanish
      } else {
        if (kShellSpecial.find(c) != std::string_view::npos) {
          out += '\\';
        }
        out += c;
      }
    }
  }
  return out;
}

}  // namespace protocol
