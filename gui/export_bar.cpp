#include "gui/export_bar.hpp"

#include <QFileDialog>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>

#include "planner/config/loaders.hpp"
#include "planner/core/output_file.hpp"
#include "planner/export/export.hpp"

namespace spplan::gui {

ExportBar::ExportBar(QWidget* parent) : QWidget(parent) {
  auto* row = new QHBoxLayout(this);
  row->setContentsMargins(0, 0, 0, 0);
  row->addWidget(new QLabel(tr("Export plan:"), this));
  for (const std::string& name : export_format_names()) {
    auto* button = new QPushButton(QString::fromStdString(name) + "…", this);
    button->setObjectName(QString::fromStdString("export-" + name));
    button->setToolTip(tr("spplan export --format %1: write %2").arg(QString::fromStdString(name), suggestedFileName(name)));
    connect(button, &QPushButton::clicked, this, [this, name] {
      const QString path = QFileDialog::getSaveFileName(this, tr("Export %1").arg(QString::fromStdString(name)),
                                                        suggestedFileName(name));
      if (path.isEmpty()) return;
      const Status s = exportTo(name, path);
      Q_EMIT exported(s ? tr("wrote %1").arg(path) : QString::fromStdString(s.message()), s.is_ok());
    });
    row->addWidget(button);
    m_buttons.push_back(button);
    m_toolTips.push_back(button->toolTip());
  }
  setPlan(nullptr);
}

void ExportBar::setPlan(const PlanSpec* plan) {
  m_plan = plan ? std::make_unique<PlanSpec>(*plan) : nullptr;
  const std::vector<std::string>& names = export_format_names();
  for (size_t i = 0; i < m_buttons.size(); ++i) {
    QPushButton* b = m_buttons[i];
    b->setToolTip(m_plan ? m_toolTips[i] : tr("select a plan that fits"));
    if (!m_plan) {
      b->setEnabled(false);
      continue;
    }
    // Greyed before a file is asked for when the format cannot express the plan (a ring in
    // DeepSpeed's config, a knob the trainer's launcher has no flag for): the reason is
    // export_plan()'s own message, as `spplan export` prints it, before any file is asked for.
    const Result<std::string> text = export_plan(*m_plan, *parse_export_format(names[i]));
    b->setEnabled(text.ok());
    if (!text.ok()) b->setToolTip(QString::fromStdString(text.status().message()));
  }
}

Status ExportBar::exportTo(const std::string& formatName, const QString& path) const {
  if (!m_plan) return Status::invalid("export: no plan selected (allowed: select a plan that fits)");
  SPPLAN_ASSIGN_OR_RETURN(const ExportFormat format, parse_export_format(formatName, "--format"));
  SPPLAN_ASSIGN_OR_RETURN(const std::string text, export_plan(*m_plan, format));
  return write_file_atomically(path.toStdString(), text);
}

QString ExportBar::suggestedFileName(const std::string& formatName) {
  if (formatName == "deepspeed") return QStringLiteral("ds_config.json");
  if (formatName == "accelerate") return QStringLiteral("accelerate.yaml");
  if (formatName == "arctic") return QStringLiteral("arctic.yml");
  if (formatName == "megatron") return QStringLiteral("megatron.sh");
  if (formatName == "torchtitan") return QStringLiteral("torchtitan.toml");
  if (formatName == "swift") return QStringLiteral("swift.sh");
  if (formatName == "axolotl") return QStringLiteral("axolotl.yaml");
  if (formatName == "trl") return QStringLiteral("trl.yaml");
  return QStringLiteral("torchrun.sh");
}

}  // namespace spplan::gui
