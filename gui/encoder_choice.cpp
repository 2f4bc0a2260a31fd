#include "gui/encoder_choice.hpp"

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>

namespace spplan::gui {
namespace {

// The items' keys, in their order: what a session saves.
const QString kTrainer = QStringLiteral("trainer");
const QString kFrozen = QStringLiteral("frozen");
const QString kTrained = QStringLiteral("trained");

}  // namespace

EncoderChoice::EncoderChoice(QWidget* parent) : QWidget(parent) {
  auto* row = new QHBoxLayout(this);
  row->setContentsMargins(0, 0, 0, 0);
  auto* label = new QLabel(tr("encoders"), this);
  m_combo = new QComboBox(this);
  m_combo->setObjectName(QStringLiteral("encoders"));
  m_combo->addItem(tr("trainer's"), kTrainer);
  m_combo->addItem(tr("frozen"), kFrozen);
  m_combo->addItem(tr("trained"), kTrained);
  label->setBuddy(m_combo);
  row->addWidget(label);
  row->addWidget(m_combo);
  setModel(false, false);
  connect(m_combo, &QComboBox::currentIndexChanged, this, &EncoderChoice::changed);
}

void EncoderChoice::apply(TrainingStack* stack) const {
  const QString key = text();
  if (key == kFrozen) stack->freezes_encoders = true;
  if (key == kTrained) stack->freezes_encoders = false;
}

void EncoderChoice::setModel(bool hasEncoders, bool trainerFreezes) {
  setEnabled(hasEncoders);
  m_combo->setItemText(0, trainerFreezes ? tr("trainer's: frozen") : tr("trainer's: trained"));
  m_combo->setToolTip(hasEncoders ? tr("A multimodal model's vision tower and projector: frozen holds their weights only, "
                                       "no gradients or optimizer state (--freeze-encoders / --train-encoders)")
                                  : tr("This model has no encoders (a multimodal config's vision tower and projector)"));
}

QString EncoderChoice::text() const { return m_combo->currentData().toString(); }

void EncoderChoice::setText(const QString& text) {
  if (const int i = m_combo->findData(text); i >= 0) m_combo->setCurrentIndex(i);
}

}  // namespace spplan::gui
