// error.h — SpecError: the one error type for bad user input (unknown preset, malformed
// JSON, a layout that does not divide). Parsers and validators throw it deep inside; the
// executables catch it once, print its message and exit with status 2. A typed exception
// keeps every parser free of error plumbing; nothing else in the library throws on input.
#pragma once

#include <stdexcept>
#include <string>

#include <fmt/format.h>

namespace cc {

class SpecError : public std::runtime_error {
 public:
  explicit SpecError(const std::string& message) : std::runtime_error(message) {}
};

template <typename... Args>
[[noreturn]] void fail(fmt::format_string<Args...> format, Args&&... args) {
  throw SpecError(fmt::format(format, std::forward<Args>(args)...));
}

}  // namespace cc
