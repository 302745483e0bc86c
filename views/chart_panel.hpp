#pragma once
// Qt Charts panels with the workbench's look: antialiased, a compact legend, axes from the data.
#include <QChartView>
#include <QLineSeries>
#include <QLogValueAxis>
#include <QValueAxis>
#include <QXYSeries>

#include <vector>

namespace routescope::views {

/// An empty chart with a title in a view ready to be placed in a figure, with zoom, pan, reset and
/// a hover readout attached (chart_interaction.hpp).
QChartView* make_chart_view(const QString& title, QWidget* parent);
/// Removes every series and axis of the view's chart (and forgets any zoom).
void clear_chart(QChartView* view);
/// Adds a line series of (x[i], y[i]) to the chart, attached to its (created on demand) value axes.
QLineSeries* add_line(QChartView* view, const QString& name, const std::vector<double>& x,
                      const std::vector<double>& y);
/// A curve of (x[i], y[i]) in the colour of the model of `path`, its points marked: a line,
/// solid or (`second`) dashed; or, when it has a single point (a one-layer dump's transitions),
/// a marker large enough to see, a circle or (`second`) a square, as its legend entry shows it (a
/// line of one point draws nothing, and its points were two-pixel dots).
QXYSeries* add_marked_curve(QChartView* view, const QString& name, const std::vector<double>& x,
                            const std::vector<double>& y, const QString& path, bool second);
/// The colour of a view's model (or run) `i`, the same in every chart and view: A, the first,
/// is blue; B orange; then bluish green, vermillion, reddish purple, sky blue, yellow, black
/// (Okabe and Ito's colour-blind-safe palette).
QColor model_colour(std::size_t i);
/// Draws `series` in model `i`'s colour with `style` (a model's second curve dashed).
void style_as_model(QXYSeries* series, std::size_t i, Qt::PenStyle style = Qt::SolidLine);
/// The colour of the model `path` (a dump, checkpoint or run directory) belongs to: its slot in
/// the workspace (display_name.hpp, model_colour_slot), so one model has one colour in every
/// chart and view whatever its place among a view's inputs.
QColor model_colour_of(const QString& path);
/// The colour of B in a comparison of A and B: the colour of B's model, lightened when B is the
/// same model as A (a checkpoint beside its own dump, two layers of one dump).
QColor compared_colour(const QString& a, const QString& b);
/// Draws `series` in `colour` with `style`.
void style_in(QXYSeries* series, const QColor& colour, Qt::PenStyle style = Qt::SolidLine);
/// Draws `series` in the colour of the model of `path` with `style`.
void style_as_model_of(QXYSeries* series, const QString& path, Qt::PenStyle style = Qt::SolidLine);

/// Replaces `old` by `fresh` on the chart: same title (drawn by the figure or not), side, fonts,
/// colours and series; `old` is deleted.
void replace_axis(QChart* chart, QAbstractAxis* old, QAbstractAxis* fresh);
/// A linear axis along `o` with the workbench's round ticks, in place of `replacing` (its title,
/// side and series), or added at the bottom or left.
QValueAxis* linear_axis(QChartView* view, Qt::Orientation o, QAbstractAxis* replacing = nullptr);

/// Value axes of the chart, created and attached on first use, with titles.
QValueAxis* x_axis(QChartView* view, const QString& title = {});
QValueAxis* y_axis(QChartView* view, const QString& title = {});
/// Ticks of the axis at whole numbers only (layers, components, steps), whatever range it is given
/// (a zoom, a print's margins): round steps of at least 1, labelled without decimals.
void set_integer_ticks(QValueAxis* axis);
/// An axis of layers: whole-number ticks, or quarters for the relative depth ℓ / n_layers.
void set_layer_ticks(QValueAxis* axis, bool relative_depth);
/// Sets a log axis to [lo, hi] (lo > 0) so that it carries two labels or more (Qt labels only the
/// powers of its base): base 10 where the range holds two powers of ten; else, with `octaves`,
/// base 2, widened to the octaves around it where it holds fewer than two powers of two (1.1 to
/// 1.8 → 1 to 2); else widened to the decades around it (5e6 to 4e7 → 1e6 to 1e8).
void set_labelled_log_range(QLogValueAxis* axis, double lo, double hi, bool octaves);
/// Sets both axes' ranges to the data of every series (with a margin), so charts never clip. While
/// the user has zoomed in, the fitted range becomes the reset target and the zoom stays.
void fit_axes(QChartView* view);

}  // namespace routescope::views
