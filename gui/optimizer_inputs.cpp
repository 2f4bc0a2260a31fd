#include "gui/optimizer_inputs.hpp"

#include <QGridLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <vector>

#include "planner/core/args.hpp"

namespace spplan::gui {

OptimizerInputs::OptimizerInputs(QWidget* parent) : QWidget(parent) {
  // Two rows of fields: ten in one row would set the window's narrowest width.
  constexpr int kFieldsPerRow = 5;
  auto* grid = new QGridLayout(this);
  grid->setContentsMargins(0, 0, 0, 0);
  auto* title = new QLabel(tr("Optimizer (AdamW):"), this);
  title->setToolTip(tr("What the saved plan and every export train with: a full fine-tune's recipe, each value "
                       "cited in planner/config/optimizer_spec.cpp (as spplan plan writes it)"));
  grid->addWidget(title, 0, 0);
  int index = 0;
  for (const FlagSpec& spec : optimizer_flag_specs(fine_tuning_recipe())) {
    auto* label = new QLabel(QString::fromStdString(spec.name), this);
    auto* edit = new QLineEdit(this);
    // --train-steps has no recipe value: empty means "not given", as the absent flag.
    const bool given = spec.name != "train-steps" || fine_tuning_recipe().train_steps > 0;
    m_recipeText[spec.name] = given ? QString::fromStdString(spec.default_value) : QString();
    edit->setText(m_recipeText[spec.name]);
    if (!given) edit->setPlaceholderText(tr("not given"));
    edit->setToolTip(QString::fromStdString("--" + spec.name + ": " + spec.help + "; allowed: " + spec.allowed));
    edit->setMaximumWidth(80);
    label->setBuddy(edit);
    const int row = index / kFieldsPerRow, column = 1 + 2 * (index % kFieldsPerRow);
    grid->addWidget(label, row, column, Qt::AlignRight);
    grid->addWidget(edit, row, column + 1);
    ++index;
    m_fields[spec.name] = edit;
    connect(edit, &QLineEdit::textChanged, this, &OptimizerInputs::changed);
  }
  auto* recipe = new QPushButton(tr("Recipe"), this);
  recipe->setToolTip(tr("Back to the cited fine-tuning recipe"));
  connect(recipe, &QPushButton::clicked, this, &OptimizerInputs::reset);
  grid->addWidget(recipe, 0, 1 + 2 * kFieldsPerRow);
  grid->setColumnStretch(2 + 2 * kFieldsPerRow, 1);
}

Result<OptimizerSpec> OptimizerInputs::spec() const {
  // The fields as the flags they stand for: "--lr 2e-5 ...", parsed by the CLI's own functions.
  std::vector<std::string> words;
  for (const auto& [flag, edit] : m_fields) {
    const QString text = edit->text().trimmed();
    if (text == m_recipeText.at(flag) && !edit->isModified()) continue;
    if (text.isEmpty() && m_recipeText.at(flag).isEmpty()) continue;
    words.push_back("--" + flag);
    words.push_back(text.toStdString());
  }
  SPPLAN_ASSIGN_OR_RETURN(const Args args, Args::parse(words, optimizer_flag_specs(fine_tuning_recipe())));
  OptimizerSpec optimizer = fine_tuning_recipe();
  SPPLAN_RETURN_IF_ERROR(apply_optimizer_flags(args, &optimizer));
  SPPLAN_RETURN_IF_ERROR(check_optimizer(optimizer, optimizer_flag));
  return optimizer;
}

QLineEdit* OptimizerInputs::field(const std::string& flag) const {
  const auto it = m_fields.find(flag);
  return it == m_fields.end() ? nullptr : it->second;
}

void OptimizerInputs::reset() {
  for (const auto& [flag, edit] : m_fields) edit->setText(m_recipeText.at(flag));  // setText clears isModified
}

std::map<QString, QString> OptimizerInputs::texts() const {
  std::map<QString, QString> out;
  for (const auto& [flag, edit] : m_fields) out[QString::fromStdString(flag)] = edit->text();
  return out;
}

void OptimizerInputs::setTexts(const std::map<QString, QString>& texts) {
  for (const auto& [flag, text] : texts) {
    if (QLineEdit* edit = field(flag.toStdString())) edit->setText(text);  // spec() applies what differs
  }
  Q_EMIT changed();
}

}  // namespace spplan::gui
