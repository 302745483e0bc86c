// Project files (*.rsproj, app/gui/project_file; Qt Core only). Input: the file. A project that
// loads is written back and read again (to_json/from_json round trip must give the same JSON).
#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>
#include <cstdio>
#include <cstdlib>

#include "app/gui/project_file.hpp"
#include "fuzz/common.hpp"

using namespace routescope;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string& path = fuzz::write_temp(data, size, ".rsproj");
    const QDir base = QFileInfo(QString::fromStdString(path)).absoluteDir();
    fuzz::run_reader("Project::load", [&] {
        const gui::Project p = gui::Project::load(QString::fromStdString(path));
        const nlohmann::json once = p.to_json(base);
        const nlohmann::json twice = gui::Project::from_json(once, base).to_json(base);
        if (once != twice) {
            std::fprintf(stderr, "fuzz: project round trip differs:\n%s\n%s\n", once.dump().c_str(),
                         twice.dump().c_str());
            std::abort();
        }
    });
    return 0;
}
