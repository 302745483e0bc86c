#pragma once
// Colour maps as 256-entry tables from their published sources (views/colour_tables.cpp, written
// by views/make_colour_tables.py): viridis for magnitudes (perceptually uniform, readable in grey
// and by colour-blind readers) and Moreland's cool-warm diverging map for signed values, its light
// neutral centre at 0.
#include "views/colour_tables.hpp"

#include <QColor>
#include <QString>

#include <array>

namespace routescope::views {

class ColourMap {
public:
    /// van der Walt & Smith's viridis (matplotlib 2.0's default): matplotlib's 256 entries.
    static const ColourMap& viridis();
    /// Moreland's cool-warm map (2009): blue for negative, red for positive, light grey at 0.
    static const ColourMap& diverging();
    static const ColourMap& by_name(const QString& name);

    /// t in [0, 1] (clamped; NaN gives grey). Entry i sits at t = i / 255; between two entries
    /// the published components are interpolated linearly, then rounded to 8 bits, so 0.5 (a
    /// diverging map's 0) falls halfway between entries 127 and 128.
    QRgb at(double t) const;
    /// Entry i rounded to 8 bits per channel (round(255 v), matplotlib's to_hex).
    QRgb entry(int i) const { return table_[static_cast<std::size_t>(i)]; }
    /// Entry i as published: sRGB components in [0, 1].
    const ColourEntry& published(int i) const { return (*published_)[static_cast<std::size_t>(i)]; }
    const QString& name() const { return name_; }
    bool is_diverging() const { return diverging_; }
    static constexpr int kSize = 256;

private:
    ColourMap(QString name, bool diverging, const std::array<ColourEntry, kSize>& published);
    QString name_;
    bool diverging_;
    const std::array<ColourEntry, kSize>* published_;
    std::array<QRgb, kSize> table_{};
};

}  // namespace routescope::views
