// Result<T>: a value or an Error, the one error currency of protocol/, arch/ and tracer/.
// Small on purpose: g++ 12 and clang 14 (libFuzzer) must both compile it, so no <expected>.
#pragma once

#include <cassert>
#include <cerrno>
#include <cstring>
#include <string>
#include <utility>
#include <variant>

namespace base {

enum class Errc {
  malformed,       // client input that does not parse
  invalid,         // well-formed but not acceptable (bad length, bad thread, ...)
  no_process,      // no inferior to act on
  no_thread,       // the thread does not exist (any more)
  unsupported,     // not implemented / not available on this machine
  exhausted,       // out of a fixed resource (debug registers, ...)
  system,          // a system call failed; see sys_errno
  overflow,        // data was lost (btrace delta)
  failed,          // an operation on the inferior did not complete (a call that faulted)
  timed_out,       // ... or did not complete in time
  not_yet,         // not possible in the program's present state (asked again later, it may be)
  internal,        // our own bug
};

struct Error {
  Errc code = Errc::internal;
  int sys_errno = 0;   // errno when code == system (0 otherwise)
  std::string detail;  // short, human readable, no trailing period

  // "detail (strerror)" or just "detail".
  std::string message() const {
    if (sys_errno == 0) {
      return detail;
    }
    return detail + " (" + std::strerror(sys_errno) + ")";
  }
};

inline Error make_error(Errc code, std::string detail) { return Error{code, 0, std::move(detail)}; }

// An Error for a failed system call; reads errno unless one is given.
inline Error sys_error(std::string what, int err = errno) { return Error{Errc::system, err, std::move(what)}; }

template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::in_place_index<0>, std::move(value)) {}  // NOLINT: implicit by design
  Result(Error err) : v_(std::in_place_index<1>, std::move(err)) {}  // NOLINT

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }

  T& value() & { assert(ok()); return std::get<0>(v_); }
  const T& value() const& { assert(ok()); return std::get<0>(v_); }
  T&& value() && { assert(ok()); return std::get<0>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T&& operator*() && { return std::move(*this).value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  const Error& error() const& { assert(!ok()); return std::get<1>(v_); }
  Error&& error() && { assert(!ok()); return std::get<1>(std::move(v_)); }

  T value_or(T fallback) const { return ok() ? std::get<0>(v_) : std::move(fallback); }

 private:
  std::variant<T, Error> v_;
};

template <>
class [[nodiscard]] Result<void> {
 public:
  Result() = default;
  Result(Error err) : err_(std::move(err)), ok_(false) {}  // NOLINT

  bool ok() const { return ok_; }
  explicit operator bool() const { return ok_; }
  const Error& error() const& { assert(!ok_); return err_; }
  Error&& error() && { assert(!ok_); return std::move(err_); }

 private:
  Error err_;
  bool ok_ = true;
};

inline Result<void> success() { return {}; }

}  // namespace base

