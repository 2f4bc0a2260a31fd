// EncoderChoice: whether a multimodal model's vision tower and projector are trained, as
// `--freeze-encoders` / `--train-encoders` choose on the CLI: the trainer's default (usp freezes
// them, as ms-swift does; the others train them), frozen, or trained. Enabled only for a model
// with encoders; a text-only model keeps the choice for the next one.
#pragma once

#include <QString>
#include <QWidget>

#include "planner/config/trainer_spec.hpp"

class QComboBox;

namespace spplan::gui {

class EncoderChoice : public QWidget {
  Q_OBJECT

 public:
  explicit EncoderChoice(QWidget* parent = nullptr);

  // The choice onto a stack loaded with the trainer's default (TrainingStack::freezes_encoders).
  void apply(TrainingStack* stack) const;
  // Enabled when the planned model has encoders; the first item names the trainer's default.
  void setModel(bool hasEncoders, bool trainerFreezes);
  // "trainer", "frozen" or "trained", and back (a saved session: another text is ignored).
  QString text() const;
  void setText(const QString& text);
  QComboBox* combo() const { return m_combo; }

 Q_SIGNALS:
  void changed();

 private:
  QComboBox* m_combo = nullptr;
};

}  // namespace spplan::gui
