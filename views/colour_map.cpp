#include "views/colour_map.hpp"

#include <algorithm>
#include <cmath>

namespace routescope::views {

static_assert(ColourMap::kSize == kColourTableSize);

namespace {
int to_8bit(double v) {
    return static_cast<int>(std::lround(255.0 * v));
}
}  // namespace

ColourMap::ColourMap(QString name, bool diverging, const std::array<ColourEntry, kSize>& published)
    : name_(std::move(name)), diverging_(diverging), published_(&published) {
    for (std::size_t i = 0; i < table_.size(); ++i) {
        const ColourEntry& e = published[i];
        table_[i] = qRgb(to_8bit(e.r), to_8bit(e.g), to_8bit(e.b));
    }
}

const ColourMap& ColourMap::viridis() {
    static const ColourMap map("viridis", false, kViridisTable);
    return map;
}

const ColourMap& ColourMap::diverging() {
    static const ColourMap map("diverging", true, kDivergingTable);
    return map;
}

const ColourMap& ColourMap::by_name(const QString& name) {
    return name == QLatin1String("diverging") ? diverging() : viridis();
}

QRgb ColourMap::at(double t) const {
    if (std::isnan(t)) return qRgb(128, 128, 128);
    const double x = std::clamp(t, 0.0, 1.0) * (kSize - 1);
    const int k = std::min(static_cast<int>(x), kSize - 2);
    const double f = x - k;
    const ColourEntry& a = (*published_)[static_cast<std::size_t>(k)];
    const ColourEntry& b = (*published_)[static_cast<std::size_t>(k + 1)];
    auto mix = [f](float u, float v) { return to_8bit(u + (v - u) * f); };
    return qRgb(mix(a.r, b.r), mix(a.g, b.g), mix(a.b, b.b));
}

}  // namespace routescope::views
