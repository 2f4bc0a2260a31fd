// OptimizerInputs: the plan's AdamW settings as `spplan plan` takes them, one field per optimizer
// flag (planner/config/optimizer_spec.hpp), filled with the same cited fine-tuning recipe the CLI
// starts from (fine_tuning_recipe()). The fields are read as the CLI reads its flags, so a plan the
// GUI saves or exports carries the settings `spplan plan` would write, and a bad value gets the
// CLI's message ("--lr: value ...").
#pragma once

#include <QWidget>
#include <map>
#include <string>

#include "planner/config/optimizer_spec.hpp"
#include "planner/core/status.hpp"

class QLineEdit;

namespace spplan::gui {

class OptimizerInputs : public QWidget {
  Q_OBJECT

 public:
  explicit OptimizerInputs(QWidget* parent = nullptr);

  // The recipe with every field that differs from it (or that the user typed in) applied as its
  // flag, then checked as `spplan plan` checks them.
  Result<OptimizerSpec> spec() const;
  // The field of a flag ("lr", "train-steps"); nullptr for another name.
  QLineEdit* field(const std::string& flag) const;
  // Back to the recipe.
  void reset();
  // Every field's text by flag, and back (a saved session; a flag no field has is ignored).
  std::map<QString, QString> texts() const;
  void setTexts(const std::map<QString, QString>& texts);

 Q_SIGNALS:
  void changed();

 private:
  std::map<std::string, QLineEdit*> m_fields;    // by flag name
  std::map<std::string, QString> m_recipeText;   // what each field holds for the recipe
};

}  // namespace spplan::gui
