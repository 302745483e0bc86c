#pragma once
// Errors are exceptions that name what failed and where (file, dataset path, line, config key).
// The CLI maps them to exit codes; the GUI shows them in a dialog; nothing aborts on bad input.
#include <stdexcept>
#include <string>

namespace routescope {

/// Base of every error the engine and analysis raise on bad input or a failed operation.
class Error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

/// A file could not be opened, read or written (the message names the file).
class IoError : public Error {
public:
    using Error::Error;
};

/// A file was read but its contents break its documented format (message names file and path).
class FormatError : public Error {
public:
    using Error::Error;
};

/// A configuration key or value is wrong (message names the key).
class ConfigError : public Error {
public:
    using Error::Error;
};

}  // namespace routescope
