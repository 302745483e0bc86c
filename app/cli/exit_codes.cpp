#include "app/cli/exit_codes.hpp"

#include <H5Cpp.h>

#include <unistd.h>

#include <cerrno>
#include <exception>
#include <iostream>
#include <new>

#include "engine/core/error.hpp"
#include "engine/data/utf8.hpp"

namespace routescope::cli {

namespace {
Stage g_stage = Stage::reading_inputs;

ErrorKind io_kind() {
    return g_stage == Stage::reading_inputs ? ErrorKind::unreadable_input : ErrorKind::runtime;
}
}  // namespace

Stage current_stage() {
    return g_stage;
}
void inputs_read() {
    g_stage = Stage::running;
}
void reset_stage() {
    g_stage = Stage::reading_inputs;
}

ClassifiedError classify_current_exception() {
    try {
        throw;
    } catch (const Interrupted& e) {
        return {ErrorKind::interrupted, e.what()};
    } catch (const ConfigError& e) {
        return {ErrorKind::usage, e.what()};
    } catch (const FormatError& e) {
        return {ErrorKind::bad_input, e.what()};
    } catch (const IoError& e) {
        return {io_kind(), e.what()};
    } catch (const Error& e) {  // RuntimeFailure, TrainingDiverged, ...
        return {ErrorKind::runtime, e.what()};
    } catch (const H5::Exception& e) {
        std::string what = "HDF5: " + e.getFuncName();
        if (!e.getDetailMsg().empty()) what += ": " + e.getDetailMsg();
        return {io_kind(), what};
    } catch (const std::bad_alloc&) {
        return {ErrorKind::runtime, "out of memory (std::bad_alloc)"};
    } catch (const std::exception& e) {
        return {ErrorKind::internal, e.what()};
    } catch (...) {
        return {ErrorKind::internal, "an exception of unknown type"};
    }
}

namespace {
bool g_quiet_error = false;
}

void quiet_error_message() {
    g_quiet_error = true;
}

void unquiet_error_message() {
    g_quiet_error = false;
}

namespace {
std::string& command_slot() {
    static std::string command = "command";
    return command;
}
}  // namespace

void set_running_command(std::string command) {
    command_slot() = std::move(command);
}

const std::string& running_command() {
    return command_slot();
}

int exit_for_current_exception(std::string_view command) {
    ClassifiedError e = classify_current_exception();
    if (g_quiet_error) return exit_code(e.kind);
    // A hostile name's bytes and control characters (ESC, BEL) as \xNN; our own lines stay.
    e.message = data::printable_text(e.message, true);
    // One write(2) for the whole line: the ranks of an mpirun job share stderr, and a line
    // written a piece at a time was mixed with another rank's ("routescope-cli routescope-cli
    // dump: error: ...").
    std::string text = "routescope-cli " + std::string(command) + ": ";
    if (e.kind == ErrorKind::interrupted)
        text += e.message;
    else if (e.kind == ErrorKind::internal)
        text += "internal error: " + e.message;
    else
        text += "error: " + e.message;
    text += "\n";
    std::cerr.flush();
    std::size_t done = 0;
    while (done < text.size()) {
        const ssize_t n = ::write(STDERR_FILENO, text.data() + done, text.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;  // stderr closed or full: nothing more can be said
        done += static_cast<std::size_t>(n);
    }
    return exit_code(e.kind);
}

}  // namespace routescope::cli
