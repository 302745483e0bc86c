#pragma once
// The thread pool that the workbench's background work runs on (analyses, opening files). Not Qt's
// global pool: Qt 6.4's raster paint engine splits large fills and image scaling into jobs on the
// global pool and waits for them on the GUI thread, so analyses that occupy every global thread
// froze painting, and with it the event loop, for seconds (measured by test_event_loop_latency:
// 2.4–6.7 s between 10 ms timer ticks while a run and two analyses were going).
class QThreadPool;

namespace routescope::views {

/// One pool for the process, as many threads as cores; created on first use.
QThreadPool* work_thread_pool();
/// Called first by every job on the pool: gives the calling thread (once) a lower scheduling
/// priority than the GUI thread (Linux: nice +kWorkerNice for that thread only), so that on a
/// loaded machine the event loop gets a core as soon as it wakes (test_event_loop_latency measured
/// 70–200 ms stalls whose GUI-thread CPU time was under 5 ms: the thread was waiting for a core).
void lower_thread_priority();
constexpr int kWorkerNice = 10;

}  // namespace routescope::views
