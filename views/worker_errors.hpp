#pragma once
// Issue 25: no exception escapes a worker. A task on work_thread_pool() that lets an exception out
// ends in QUnhandledException, which QFuture::result() rethrows on the GUI thread (terminate). So
// every worker catches everything — std::exception, H5::Exception (the HDF5 C++ API's, which does
// not derive from std::exception) and `...` — and hands back a message the user can act on.
#include <QString>

namespace routescope::views {

/// Call inside a catch block (any): the message of the exception being handled. A std::exception
/// says what(); an H5::Exception the HDF5 function and its detail ("the HDF5 library failed
/// <context>: <detail> (in <function>)"); anything else "an unexpected error (not a standard
/// exception) <context>". `context`: "while reading model.dump.h5", "in the analysis".
QString current_exception_message(const QString& context);

/// Test-only fault injection (tests/gui/test_hostile_gui.cpp): ROUTESCOPE_FAULT_THROW, a
/// comma-separated list of worker kinds — `loader` (the structure pass of opening a file), `scan`
/// (its value scan), `analysis` (an analysis view's worker) — makes that worker throw an int (not
/// a standard exception); `<kind>-h5` throws an H5::FileIException instead (what h5::open_read
/// throws on a damaged file). Each worker calls this once, at its start: one getenv per task.
void fault_throw_point(const char* kind);

}  // namespace routescope::views
