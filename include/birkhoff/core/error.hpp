#pragma once

#include <stdexcept>
#include <string>

namespace birkhoff {

/// Thrown for every invalid argument: wrong shape, NaN/inf, negative or zero-mass weights,
/// out-of-range ids, unreadable files. The message names the offending argument.
/// Derives from std::invalid_argument so that Python bindings map it to ValueError.
class InvalidInput : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

/// Thrown for an argument of the wrong element type (for example an int64 array where float32
/// points are expected). Python bindings map it to TypeError.
class InvalidType : public InvalidInput {
 public:
  using InvalidInput::InvalidInput;
};

/// Thrown when a progress callback asks a long run to stop (Ctrl-C in Python).
class Cancelled : public std::runtime_error {
 public:
  Cancelled() : std::runtime_error("cancelled by the caller") {}
};

/// Throws InvalidInput("<argument>: <what>") when `ok` is false.
inline void require(bool ok, const std::string& argument, const std::string& what) {
  if (!ok) throw InvalidInput(argument + ": " + what);
}

}  // namespace birkhoff
