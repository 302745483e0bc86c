#pragma once
// The workbench's colour theme (ISSUE 6: "light and dark themes following the platform with an
// override"): the platform's own palette and style by default, or a light or dark Fusion palette
// chosen in View › Theme. The choice is kept in QSettings ("ui/theme") and applied to the whole
// application. Exported figures keep their white paper whatever the theme.
#include <QString>

namespace routescope::gui {

enum class ColourTheme { System, Light, Dark };

/// "system", "light", "dark".
QString colour_theme_name(ColourTheme theme);
/// The theme named `name`; System for anything else (an old or hand-edited setting).
ColourTheme colour_theme_from_name(const QString& name);

/// The theme in QSettings (System when none was chosen).
ColourTheme saved_colour_theme();
void save_colour_theme(ColourTheme theme);

/// Sets the application's style and palette: System restores what the platform gave at start-up.
/// Needs a QApplication.
void apply_colour_theme(ColourTheme theme);

}  // namespace routescope::gui
