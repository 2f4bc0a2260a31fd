#include "gui/stack_choices.hpp"

#include <QComboBox>
#include <QGridLayout>
#include <QLabel>

#include "planner/config/trainer_spec.hpp"

namespace spplan::gui {
namespace {

// Each combo's first item: the trainer's default, no flag. Its data is what a session saves.
const QString kTrainers = QStringLiteral("trainer");
const QString kFrozen = QStringLiteral("frozen");
const QString kTrained = QStringLiteral("trained");

// One row of the grid: the label right-aligned, then its combo.
QComboBox* addCombo(QGridLayout* grid, const QString& label, const char* name, QWidget* parent) {
  auto* text = new QLabel(label, parent);
  auto* combo = new QComboBox(parent);
  combo->setObjectName(QString::fromLatin1(name));
  text->setBuddy(combo);
  const int row = grid->count() / 2;  // two widgets a row
  grid->addWidget(text, row, 0, Qt::AlignRight);
  grid->addWidget(combo, row, 1);
  return combo;
}

}  // namespace

StackChoices::StackChoices(QWidget* parent) : QWidget(parent) {
  // Two rows, beside the optimizer's two: one row more would set the window's narrowest width.
  auto* grid = new QGridLayout(this);
  grid->setContentsMargins(0, 0, 0, 0);
  m_attention = addCombo(grid, tr("attention"), "attention", this);
  m_attention->addItem(tr("trainer's"), kTrainers);
  for (const std::string& kernel : attention_kernel_names()) {
    m_attention->addItem(QString::fromStdString(kernel), QString::fromStdString(kernel));
  }
  m_attention->setToolTip(tr("--attention: the kernel every layout runs; trainer's: the one each layout runs on the "
                             "trainer (the Hugging Face Trainer's ring: SDPA)"));
  m_encoders = addCombo(grid, tr("encoders"), "encoders", this);
  m_encoders->addItem(tr("trainer's"), kTrainers);
  m_encoders->addItem(tr("frozen"), kFrozen);
  m_encoders->addItem(tr("trained"), kTrained);
  setModel(false, false);
  for (QComboBox* combo : {m_attention, m_encoders}) {
    connect(combo, &QComboBox::currentIndexChanged, this, &StackChoices::changed);
  }
}

std::vector<std::string> StackChoices::flags() const {
  std::vector<std::string> words;
  if (const QString kernel = m_attention->currentData().toString(); kernel != kTrainers) {
    words.push_back("--attention");
    words.push_back(kernel.toStdString());
  }
  const QString encoders = m_encoders->currentData().toString();
  if (encoders == kFrozen) words.push_back("--freeze-encoders");
  if (encoders == kTrained) words.push_back("--train-encoders");
  return words;
}

void StackChoices::setModel(bool hasEncoders, bool trainerFreezes) {
  m_encoders->setEnabled(hasEncoders);
  m_encoders->setItemText(0, trainerFreezes ? tr("trainer's: frozen") : tr("trainer's: trained"));
  m_encoders->setToolTip(hasEncoders
                             ? tr("A multimodal model's vision tower and projector: frozen holds their weights only, "
                                  "no gradients or optimizer state (--freeze-encoders / --train-encoders)")
                             : tr("This model has no encoders (a multimodal config's vision tower and projector)"));
}

QComboBox* StackChoices::combo(const std::string& name) const {
  if (name == "attention") return m_attention;
  if (name == "encoders") return m_encoders;
  return nullptr;
}

std::map<QString, QString> StackChoices::texts() const {
  std::map<QString, QString> chosen;
  for (const char* name : {"attention", "encoders"}) {
    const QString value = combo(name)->currentData().toString();
    if (value != kTrainers) chosen[QString::fromLatin1(name)] = value;
  }
  return chosen;
}

void StackChoices::setTexts(const std::map<QString, QString>& texts) {
  for (const char* name : {"attention", "encoders"}) {
    const auto it = texts.find(QString::fromLatin1(name));
    const int i = combo(name)->findData(it == texts.end() ? kTrainers : it->second);
    if (i >= 0) combo(name)->setCurrentIndex(i);
  }
}

}  // namespace spplan::gui
