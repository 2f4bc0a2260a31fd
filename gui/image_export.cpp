#include "gui/image_export.hpp"

#include <QFileDialog>
#include <QHBoxLayout>
#include <QPushButton>
#include <QVBoxLayout>
#include <QPainter>
#include <QPixmap>
#include <QSvgGenerator>
#include <QWidget>

namespace spplan::gui {

Status saveWidgetImage(QWidget* widget, const QString& path) {
  const std::string where = path.toStdString();
  if (path.endsWith(".png", Qt::CaseInsensitive)) {
    if (!widget->grab().save(path, "PNG")) return Status::invalid(where + ": cannot be written (allowed: a writable path)");
    return Status::ok();
  }
  if (!path.endsWith(".svg", Qt::CaseInsensitive)) {
    return Status::invalid(where + ": unknown image format (allowed: a path ending in .png or .svg)");
  }
  QSvgGenerator svg;
  svg.setFileName(path);
  svg.setSize(widget->size());
  svg.setViewBox(QRect(QPoint(0, 0), widget->size()));
  svg.setTitle(widget->accessibleName());
  QPainter painter;
  if (!painter.begin(&svg)) return Status::invalid(where + ": cannot be written (allowed: a writable path)");
  widget->render(&painter);
  painter.end();
  return Status::ok();
}

QWidget* withImageExport(QWidget* view, const QString& baseName, std::function<void(const QString&, bool)> report,
                         const std::vector<QWidget*>& extraButtons) {
  auto* box = new QWidget;
  auto* layout = new QVBoxLayout(box);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(view, 1);
  auto* button = new QPushButton(QObject::tr("Save image…"), box);
  button->setObjectName("save-image-" + baseName);
  button->setToolTip(QObject::tr("Save this chart as PNG or SVG"));
  auto* row = new QHBoxLayout;
  row->addStretch(1);
  for (QWidget* extra : extraButtons) row->addWidget(extra);
  row->addWidget(button);
  layout->addLayout(row);
  QObject::connect(button, &QPushButton::clicked, box, [view, baseName, report] {
    const QString path = QFileDialog::getSaveFileName(view, QObject::tr("Save image"), baseName + ".png",
                                                      QObject::tr("PNG image (*.png);;SVG image (*.svg)"));
    if (path.isEmpty()) return;
    const Status s = saveWidgetImage(view, path);
    report(s ? QObject::tr("wrote %1").arg(path) : QString::fromStdString(s.message()), s.is_ok());
  });
  return box;
}

}  // namespace spplan::gui
