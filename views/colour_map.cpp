#include "views/colour_map.hpp"

#include <cmath>
#include <vector>

namespace routescope::views {

ColourMap::ColourMap(QString name, bool diverging, std::initializer_list<QRgb> stops)
    : name_(std::move(name)), diverging_(diverging) {
    // Linear interpolation in sRGB between equally spaced stops; with nine or eleven stops the
    // difference from the 256-entry originals is below what a screen shows.
    const std::vector<QRgb> s(stops);
    const int segments = static_cast<int>(s.size()) - 1;
    for (int i = 0; i < kSize; ++i) {
        const double x = static_cast<double>(i) / (kSize - 1) * segments;
        const int k = std::min(static_cast<int>(x), segments - 1);
        const double f = x - k;
        auto mix = [f](int a, int b) { return static_cast<int>(std::lround(a + (b - a) * f)); };
        table_[static_cast<std::size_t>(i)] =
            qRgb(mix(qRed(s[k]), qRed(s[k + 1])), mix(qGreen(s[k]), qGreen(s[k + 1])),
                 mix(qBlue(s[k]), qBlue(s[k + 1])));
    }
}

const ColourMap& ColourMap::viridis() {
    static const ColourMap map(
        "viridis", false,
        {0x440154, 0x472d7b, 0x3b528b, 0x2c728e, 0x21918c, 0x28ae80, 0x5ec962, 0xaddc30, 0xfde725});
    return map;
}

const ColourMap& ColourMap::diverging() {
    static const ColourMap map("diverging", true,
                               {0x053061, 0x2166ac, 0x4393c3, 0x92c5de, 0xd1e5f0, 0xf7f7f7,
                                0xfddbc7, 0xf4a582, 0xd6604d, 0xb2182b, 0x67001f});
    return map;
}

const ColourMap& ColourMap::by_name(const QString& name) {
    return name == QLatin1String("diverging") ? diverging() : viridis();
}

QRgb ColourMap::at(double t) const {
    if (std::isnan(t)) return qRgb(128, 128, 128);
    const double c = std::clamp(t, 0.0, 1.0);
    return table_[static_cast<std::size_t>(std::lround(c * (kSize - 1)))];
}

}  // namespace routescope::views
