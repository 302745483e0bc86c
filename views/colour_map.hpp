#pragma once
// Colour maps as 256-entry tables: viridis for magnitudes (perceptually uniform, readable in grey
// and by colour-blind readers) and a blue–white–red diverging map for signed values, white at 0.
#include <QColor>
#include <QString>

#include <array>

namespace routescope::views {

class ColourMap {
public:
    /// van der Walt & Smith's viridis (matplotlib 2.0's default), sampled at nine published stops.
    static const ColourMap& viridis();
    /// ColorBrewer's 11-class RdBu, reversed so that negative is blue and positive red.
    static const ColourMap& diverging();
    static const ColourMap& by_name(const QString& name);

    /// t in [0, 1] (clamped; NaN gives grey).
    QRgb at(double t) const;
    QRgb entry(int i) const { return table_[static_cast<std::size_t>(i)]; }
    const QString& name() const { return name_; }
    bool is_diverging() const { return diverging_; }
    static constexpr int kSize = 256;

private:
    ColourMap(QString name, bool diverging, std::initializer_list<QRgb> stops);
    QString name_;
    bool diverging_;
    std::array<QRgb, kSize> table_{};
};

}  // namespace routescope::views
