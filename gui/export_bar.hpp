// ExportBar: one button per `spplan export` format (planner/export: deepspeed, accelerate, arctic,
// torchrun) for the selected plan. Each asks for a file and writes export_plan()'s text; errors are
// export_plan()'s own messages, as the CLI prints them.
#pragma once

#include <QString>
#include <QWidget>
#include <memory>
#include <vector>

#include "planner/config/plan_spec.hpp"
#include "planner/core/status.hpp"

class QPushButton;

namespace spplan::gui {

class ExportBar : public QWidget {
  Q_OBJECT

 public:
  explicit ExportBar(QWidget* parent = nullptr);

  // null: nothing selected (buttons disabled). A format that cannot express the plan is disabled
  // too, its tooltip the reason.
  void setPlan(const PlanSpec* plan);

  // Writes the `formatName` export of the plan to `path` (what a button does after its dialog).
  Status exportTo(const std::string& formatName, const QString& path) const;

  // The file name a dialog suggests for a format: ds_config.json, accelerate.yaml, arctic.yml, torchrun.sh.
  static QString suggestedFileName(const std::string& formatName);

 Q_SIGNALS:
  void exported(const QString& message, bool ok);

 private:
  std::unique_ptr<PlanSpec> m_plan;
  std::vector<QPushButton*> m_buttons;   // in export_format_names() order
  std::vector<QString> m_toolTips;        // each button's tooltip when it can export the plan
};

}  // namespace spplan::gui
