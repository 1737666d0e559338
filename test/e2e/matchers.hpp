// Catch2 matchers for GDB output.
#pragma once

#include <catch2/catch.hpp>

#include <regex>
#include <string>

namespace e2e {

// True if some part of the string matches the ECMAScript regex (std::regex_search).
class ContainsRegexMatcher : public Catch::MatcherBase<std::string> {
 public:
  explicit ContainsRegexMatcher(std::string re) : text_(std::move(re)), re_(text_) {}
  bool match(const std::string& s) const override { return std::regex_search(s, re_); }
  std::string describe() const override { return "contains a match for /" + text_ + "/"; }

 private:
  std::string text_;
  std::regex re_;
};

inline ContainsRegexMatcher ContainsRegex(std::string re) {
  return ContainsRegexMatcher(std::move(re));
}

// How many times needle occurs in text (overlapping occurrences counted).
inline std::size_t occurrences(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) {
    ++n;
  }
  return n;
}

}  // namespace e2e
