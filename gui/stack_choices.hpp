// StackChoices: what the trainer runs beyond its record's defaults, as the CLI's stack flags choose
// (planner/config/stack_flags.hpp): the attention kernel (--attention; "trainer's": the kernel each
// layout runs on the trainer) and a multimodal model's encoders (--freeze-encoders /
// --train-encoders; "trainer's": usp freezes them, as ms-swift does, the others train them). The
// encoders' choice is enabled only for a model with encoders; a text-only model keeps it for the
// next one. The choices become those flags and are read by the CLI's own reader.
#pragma once

#include <QString>
#include <QWidget>
#include <map>
#include <string>
#include <vector>

class QComboBox;

namespace spplan::gui {

class StackChoices : public QWidget {
  Q_OBJECT

 public:
  explicit StackChoices(QWidget* parent = nullptr);

  // The flags the choices stand for: {"--attention", "sdpa", "--freeze-encoders"}; none when every
  // choice is the trainer's.
  std::vector<std::string> flags() const;
  // Enables the encoders' choice for a model with encoders; its first item names the trainer's default.
  void setModel(bool hasEncoders, bool trainerFreezes);
  // The combo of "attention" or "encoders"; null for another name.
  QComboBox* combo(const std::string& name) const;
  // The choices that are not the trainer's, by name ({"attention": "sdpa", "encoders": "frozen"}),
  // and back (a saved session: a name or a value no combo has is ignored).
  std::map<QString, QString> texts() const;
  void setTexts(const std::map<QString, QString>& texts);

 Q_SIGNALS:
  void changed();

 private:
  QComboBox* m_attention = nullptr;
  QComboBox* m_encoders = nullptr;
};

}  // namespace spplan::gui
