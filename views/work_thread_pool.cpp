#include "views/work_thread_pool.hpp"

#include <QThread>
#include <QThreadPool>

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

}  // namespace routescope::views
