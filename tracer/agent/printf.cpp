#include "tracer/agent/printf.hpp"

#include <fmt/printf.h>

#include <cstring>
#include <optional>

namespace tracer::agent {
namespace {

base::Error bad(const std::string& what) {
  return base::Error{base::Errc::invalid, 0, "agent printf: " + what};
}

// One conversion: its text ("%-8lx"), the precision if given, its length modifier and letter.
struct Directive {
  std::string spec;
  std::optional<std::size_t> precision;
  std::string length;
  char conversion = 0;
};

// The directive at format[at] (a '%' that is not "%%"); at moves past it.
base::Result<Directive> parse_directive(std::string_view format, std::size_t& at) {
  const std::size_t start = at++;
  Directive d;
  auto digits = [&] {
    std::size_t n = 0;
    while (at < format.size() && format[at] >= '0' && format[at] <= '9') {
      n = n * 10 + static_cast<std::size_t>(format[at++] - '0');
      if (n > 4096) {
        return n;  // (a width or precision past this is refused below)
      }
    }
    return n;
  };
  while (at < format.size() && std::strchr("-+ #0", format[at]) != nullptr) {
    ++at;
  }
  if (digits() > 4096) {
    return bad("width too large in '" + std::string(format.substr(start, at - start)) + "'");
  }
  if (at < format.size() && format[at] == '.') {
    ++at;
    d.precision = digits();
    if (*d.precision > 4096) {
      return bad("precision too large");
    }
  }
  const std::size_t length_at = at;
  while (at < format.size() && std::strchr("hljzt", format[at]) != nullptr && at - length_at < 2) {
    ++at;
  }
  d.length = std::string(format.substr(length_at, at - length_at));
  if (at == format.size()) {
    return bad("unfinished conversion '" + std::string(format.substr(start)) + "'");
  }
  d.conversion = format[at++];
  d.spec = std::string(format.substr(start, at - start));
  const bool known_length = d.length.empty() || d.length == "hh" || d.length == "h" || d.length == "l" ||
                            d.length == "ll" || d.length == "j" || d.length == "z" || d.length == "t";
  const bool integer = std::strchr("diouxX", d.conversion) != nullptr;
  const bool plain = std::strchr("csp", d.conversion) != nullptr && d.length.empty();
  if (!known_length || !(integer || plain)) {
    return bad("conversion '" + d.spec + "' is not supported (integers, %c, %s and %p are)");
  }
  return d;
}

// The NUL-terminated string at addr, at most limit bytes of it.
base::Result<std::string> read_string(Machine& machine, Addr addr, std::size_t limit) {
  std::string s;
  while (s.size() < limit) {
    auto byte = machine.read(addr + s.size(), 1);
    if (!byte) {
      return bad(fmt::format("cannot read the string at {:#x}", addr));
    }
    if (*byte == 0) {
      break;
    }
    s.push_back(static_cast<char>(*byte));
  }
  return s;
}

// value narrowed to what d's length and conversion say, formatted by d.spec.
std::string format_integer(const Directive& d, std::uint64_t value) {
  const bool is_signed = d.conversion == 'd' || d.conversion == 'i';
  if (d.length == "hh") {
    return is_signed ? fmt::sprintf(d.spec, static_cast<signed char>(value))
                     : fmt::sprintf(d.spec, static_cast<unsigned char>(value));
  }
  if (d.length == "h") {
    return is_signed ? fmt::sprintf(d.spec, static_cast<short>(value))
                     : fmt::sprintf(d.spec, static_cast<unsigned short>(value));
  }
  if (d.length.empty()) {
    return is_signed ? fmt::sprintf(d.spec, static_cast<int>(value))
                     : fmt::sprintf(d.spec, static_cast<unsigned>(value));
  }
  return is_signed ? fmt::sprintf(d.spec, static_cast<long long>(value))
                   : fmt::sprintf(d.spec, static_cast<unsigned long long>(value));
}

// The character a backslash escape in GDB's format stands for (GDB sends the format as the
// user wrote it, "\n" two characters); 0 for one it does not know.
char escaped(char c) {
  switch (c) {
    case '\\': return '\\';
    case '"': return '"';
    case 'a': return '\a';
    case 'b': return '\b';
    case 'e': return '\x1b';
    case 'f': return '\f';
    case 'n': return '\n';
    case 'r': return '\r';
    case 't': return '\t';
    case 'v': return '\v';
    default: return 0;
  }
}

}  // namespace

base::Result<std::string> format_printf(std::string_view format, std::span<const std::uint64_t> args,
                                        Machine& machine) {
  std::string out;
  std::size_t next_arg = 0;
  try {
    for (std::size_t at = 0; at < format.size();) {
      if (format[at] == '\\') {
        const char c = at + 1 < format.size() ? escaped(format[at + 1]) : 0;
        if (c == 0) {
          return bad("unknown escape '" + std::string(format.substr(at, 2)) + "' in the format");
        }
        out.push_back(c);
        at += 2;
        continue;
      }
      if (format[at] != '%') {
        out.push_back(format[at++]);
        continue;
      }
      if (at + 1 < format.size() && format[at + 1] == '%') {
        out.push_back('%');
        at += 2;
        continue;
      }
      auto d = parse_directive(format, at);
      if (!d) {
        return std::move(d).error();
      }
      if (next_arg == args.size()) {
        return bad("the format wants more than the " + std::to_string(args.size()) + " values given");
      }
      const std::uint64_t value = args[next_arg++];
      if (d->conversion == 's') {
        if (value == 0) {
          out += fmt::sprintf(d->spec, "(null)");
          continue;
        }
        auto s = read_string(machine, value, std::min(d->precision.value_or(kMaxPrintedString), kMaxPrintedString));
        if (!s) {
          return std::move(s).error();
        }
        out += fmt::sprintf(d->spec, *s);
      } else if (d->conversion == 'c') {
        out += fmt::sprintf(d->spec, static_cast<char>(value));
      } else if (d->conversion == 'p') {
        out += fmt::sprintf(d->spec, reinterpret_cast<const void*>(static_cast<std::uintptr_t>(value)));
      } else {
        out += format_integer(*d, value);
      }
    }
  } catch (const fmt::format_error& e) {
    return bad(e.what());
  }
  if (next_arg != args.size()) {
    return bad("the format uses " + std::to_string(next_arg) + " of the " + std::to_string(args.size()) +
               " values given");
  }
  return out;
}

}  // namespace tracer::agent
