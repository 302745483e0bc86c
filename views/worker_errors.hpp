#pragma once
// Issue 25: no exception escapes a worker. A task on work_thread_pool() that lets an exception out
// ends in QUnhandledException, which QFuture::result() rethrows on the GUI thread (terminate). So
// every worker catches everything — std::exception, H5::Exception (the HDF5 C++ API's, which does
// not derive from std::exception) and `...` — and hands back a message the user can act on.
#include <QString>

#include <functional>

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

/// Test-only: ROUTESCOPE_FAULT_SLOW, a comma-separated list of `<view kind>:<seconds>`
/// ("similarity:20"), makes the analysis worker of a view of that kind wait that long before it
/// starts (tests/gui/test_project.cpp: an export's --timeout against one slow view). The wait
/// calls `check` every 50 ms, so a cancel ends it (check throws).
void fault_delay_point(const QString& view_kind, const std::function<void()>& check);

}  // namespace routescope::views
