#include "views/work_thread_pool.hpp"

#include <QThread>
#include <QThreadPool>

#ifdef __linux__
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace routescope::views {

QThreadPool* work_thread_pool() {
    static QThreadPool* pool = [] {
        auto* p = new QThreadPool();  // lives as long as the process, like the global pool
        p->setMaxThreadCount(QThread::idealThreadCount());
        p->setObjectName("routescope-work");
        return p;
    }();
    return pool;
}

void lower_thread_priority() {
#ifdef __linux__
    thread_local bool lowered = false;
    if (lowered) return;
    lowered = true;
    // Linux applies nice values per thread (a tid as the "process"); failure only costs latency.
    const auto tid = static_cast<id_t>(syscall(SYS_gettid));
    const int now = getpriority(PRIO_PROCESS, tid);
    if (now < kWorkerNice) setpriority(PRIO_PROCESS, tid, kWorkerNice);
#endif
}

}  // namespace routescope::views
