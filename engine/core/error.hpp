#pragma once
// Errors are exceptions that name what failed and where (file, dataset path, line, config key).
// The CLI maps them to exit codes in one table (app/cli/exit_codes.hpp, docs/cli.md "Exit codes");
// the GUI shows them in a dialog; nothing aborts on bad input.
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

/// A configuration key or value is wrong (message names the key), or a command-line option is.
class ConfigError : public Error {
public:
    using Error::Error;
};

/// The operation failed at run time, after its inputs were read (an output directory that cannot
/// be created, a failed stage of an experiment). The message names the file or stage.
class RuntimeFailure : public Error {
public:
    using Error::Error;
};

/// The run was interrupted (Ctrl-C / SIGTERM) after saving what could be saved; the message says
/// what was saved and how to continue.
class Interrupted : public Error {
public:
    using Error::Error;
};

}  // namespace routescope
