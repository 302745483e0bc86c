#include "app/gui/colour_theme.hpp"

#include <QApplication>
#include <QPalette>
#include <QSettings>
#include <QStyle>
#include <QStyleFactory>

namespace routescope::gui {
namespace {
constexpr const char* kKey = "ui/theme";

// What the platform gave before any override, captured once, so that System can go back to it.
struct PlatformLook {
    QString style;
    QPalette palette;
};

const PlatformLook& platform_look() {
    static const PlatformLook look{QApplication::style()->name(), QApplication::palette()};
    return look;
}

// A dark palette for Fusion: every role a Widgets + Charts UI reads, light text on dark grey
// (contrast about 11:1) and a disabled state that is visibly dimmer.
QPalette dark_palette() {
    QPalette p;
    const QColor window(45, 45, 48), base(30, 30, 32), text(230, 230, 230), dim(130, 130, 130);
    const QColor highlight(42, 130, 218);
    p.setColor(QPalette::Window, window);
    p.setColor(QPalette::WindowText, text);
    p.setColor(QPalette::Base, base);
    p.setColor(QPalette::AlternateBase, window);
    p.setColor(QPalette::ToolTipBase, window);
    p.setColor(QPalette::ToolTipText, text);
    p.setColor(QPalette::PlaceholderText, dim);
    p.setColor(QPalette::Text, text);
    p.setColor(QPalette::Button, window);
    p.setColor(QPalette::ButtonText, text);
    p.setColor(QPalette::BrightText, Qt::red);
    p.setColor(QPalette::Link, highlight.lighter(130));
    p.setColor(QPalette::Highlight, highlight);
    p.setColor(QPalette::HighlightedText, Qt::white);
    p.setColor(QPalette::Light, window.lighter(150));
    p.setColor(QPalette::Midlight, window.lighter(125));
    p.setColor(QPalette::Mid, window.darker(120));
    p.setColor(QPalette::Dark, window.darker(150));
    p.setColor(QPalette::Shadow, Qt::black);
    for (auto role : {QPalette::WindowText, QPalette::Text, QPalette::ButtonText})
        p.setColor(QPalette::Disabled, role, dim);
    return p;
}
}  // namespace

QString colour_theme_name(ColourTheme theme) {
    switch (theme) {
        case ColourTheme::Light:
            return "light";
        case ColourTheme::Dark:
            return "dark";
        case ColourTheme::System:
            break;
    }
    return "system";
}

ColourTheme colour_theme_from_name(const QString& name) {
    if (name == "light") return ColourTheme::Light;
    if (name == "dark") return ColourTheme::Dark;
    return ColourTheme::System;
}

ColourTheme saved_colour_theme() {
    return colour_theme_from_name(QSettings().value(kKey).toString());
}

void save_colour_theme(ColourTheme theme) {
    QSettings().setValue(kKey, colour_theme_name(theme));
}

void apply_colour_theme(ColourTheme theme) {
    const PlatformLook& platform = platform_look();
    if (theme == ColourTheme::System) {
        if (QApplication::style()->name() != platform.style)
            QApplication::setStyle(QStyleFactory::create(platform.style));
        QApplication::setPalette(platform.palette);
        return;
    }
    // Fusion honours every palette role on every platform; native styles may ignore them.
    if (QApplication::style()->name().compare("fusion", Qt::CaseInsensitive) != 0)
        QApplication::setStyle(QStyleFactory::create("Fusion"));
    QApplication::setPalette(theme == ColourTheme::Dark ? dark_palette()
                                                        : QApplication::style()->standardPalette());
}

}  // namespace routescope::gui
