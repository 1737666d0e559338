// An environment variable set (or unset) for a scope (the servers a test starts inherit it), and what it
// was given back at the scope's end.
#pragma once

#include <cstdlib>
#include <optional>
#include <string>
#include <utility>

namespace test_support {

class ScopedEnv {
 public:
  // value nullopt: unset for the scope.
  ScopedEnv(std::string name, const std::optional<std::string>& value) : name_(std::move(name)) {
    if (const char* given = std::getenv(name_.c_str())) {
      saved_ = given;
    }
    if (value) {
      ::setenv(name_.c_str(), value->c_str(), 1);
    } else {
      ::unsetenv(name_.c_str());
    }
  }
  ScopedEnv(std::string name, const char* value) : ScopedEnv(std::move(name), std::optional<std::string>(value)) {}
  ~ScopedEnv() {
    if (saved_) {
      ::setenv(name_.c_str(), saved_->c_str(), 1);
    } else {
      ::unsetenv(name_.c_str());
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  std::string name_;
  std::optional<std::string> saved_;
};

}  // namespace test_support
