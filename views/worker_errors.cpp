#include "views/worker_errors.hpp"

#include <H5Cpp.h>
#include <QObject>

#include <QThread>

#include <cstdlib>
#include <exception>
#include <string>
#include <string_view>

namespace routescope::views {

QString current_exception_message(const QString& context) {
    try {
        throw;
    } catch (const std::exception& e) {
        return QString::fromUtf8(e.what());
    } catch (const H5::Exception& e) {
        const QString detail = QString::fromStdString(e.getDetailMsg());
        const QString function = QString::fromStdString(e.getFuncName());
        QString text = QObject::tr("the HDF5 library failed %1: %2")
                           .arg(context, detail.isEmpty() ? QObject::tr("(no detail)") : detail);
        if (!function.isEmpty()) text += QObject::tr(" (in %1)").arg(function);
        return text;
    } catch (...) {
        return QObject::tr("an unexpected error (not a standard exception) %1").arg(context);
    }
}

void fault_throw_point(const char* kind) {
    const char* spec = std::getenv("ROUTESCOPE_FAULT_THROW");
    if (!spec || !*spec) return;
    const std::string_view want(kind);
    std::string_view rest(spec);
    while (!rest.empty()) {
        const std::size_t comma = rest.find(',');
        const std::string_view item = rest.substr(0, comma);
        rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
        if (item == want) throw 25;  // not a std::exception (issue 25)
        if (item.size() == want.size() + 3 && item.substr(0, want.size()) == want &&
            item.substr(want.size()) == "-h5")
            throw H5::FileIException(
                "H5File::openFile", "injected fault (ROUTESCOPE_FAULT_THROW): unable to open file");
    }
}

void fault_delay_point(const QString& view_kind, const std::function<void()>& check) {
    const char* spec = std::getenv("ROUTESCOPE_FAULT_SLOW");
    if (!spec || !*spec) return;
    for (const QString& item : QString::fromUtf8(spec).split(',')) {
        const QStringList parts = item.split(':');
        if (parts.size() != 2 || parts[0].trimmed() != view_kind) continue;
        const double seconds = parts[1].toDouble();
        for (int waited = 0; waited < seconds * 1000; waited += 50) {
            check();
            QThread::msleep(50);
        }
    }
}

}  // namespace routescope::views
