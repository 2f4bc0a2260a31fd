// CorpusInputs: the corpus a plan is priced over, as `spplan plan --lengths FILE --packing P
// --epochs N` takes it: a read-only path with "Open lengths…" and a clear button, the packing
// (wrapped, bfd, none; bfd as the CLI's default) and the epochs to price (1..1000). The file is read
// once, when it is chosen, with the CLI's reader (corpus::read_lengths_file), so a bad file gets the
// CLI's one line. MainWindow packs the corpus at the plan's sequence length on each re-plan.
#pragma once

#include <QWidget>
#include <map>
#include <optional>

#include "planner/corpus/corpus.hpp"

class QComboBox;
class QLineEdit;
class QPushButton;
class QSpinBox;

namespace spplan::gui {

class CorpusInputs : public QWidget {
  Q_OBJECT

 public:
  explicit CorpusInputs(QWidget* parent = nullptr);

  // Reads the lengths file at `path` (empty: no corpus); what the reader said is status().
  void setPath(const QString& path);
  QString path() const;
  // Ok without a corpus or with one read; else read_lengths_file's message, word for word.
  const Status& status() const { return m_status; }
  // The corpus read; nullptr without one or when the file could not be read.
  const corpus::Corpus* corpus() const { return m_corpus ? &*m_corpus : nullptr; }
  corpus::Packing packing() const;
  int epochs() const;

  // The fields by the CLI's flag names ("lengths", "packing", "epochs") and back, for a saved
  // session; setTexts reads the file again (it may have changed or gone since).
  std::map<QString, QString> texts() const;
  void setTexts(const std::map<QString, QString>& texts);

  QLineEdit* pathField() const { return m_path; }
  QComboBox* packingCombo() const { return m_packing; }
  QSpinBox* epochsSpin() const { return m_epochs; }
  QPushButton* openButton() const { return m_open; }
  QPushButton* clearButton() const { return m_clear; }

 Q_SIGNALS:
  void changed();

 private:
  void chooseFile();

  QLineEdit* m_path;
  QPushButton* m_open;
  QPushButton* m_clear;
  QComboBox* m_packing;
  QSpinBox* m_epochs;
  std::optional<corpus::Corpus> m_corpus;
  Status m_status;
};

}  // namespace spplan::gui
