// Saving any view (a chart, the step timeline) as an image: PNG (what is on screen) or SVG
// (vector; the widget painted into a QSvgGenerator). The format follows the file's ending.
#pragma once

#include <QString>
#include <functional>
#include <vector>

#include "planner/core/status.hpp"

class QWidget;

namespace spplan::gui {

// Writes `widget` to `path` (.png or .svg). Fails naming the path when the ending is neither or
// the file cannot be written.
Status saveWidgetImage(QWidget* widget, const QString& path);

// `view` with a "Save image…" button under it that asks for a PNG or SVG path (suggesting
// `baseName`.png) and reports the outcome (message, ok) to `report`; `extraButtons` go on its left.
QWidget* withImageExport(QWidget* view, const QString& baseName, std::function<void(const QString&, bool)> report,
                         const std::vector<QWidget*>& extraButtons = {});

}  // namespace spplan::gui
