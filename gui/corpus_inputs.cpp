#include "gui/corpus_inputs.hpp"

#include <QComboBox>
#include <QFileDialog>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSpinBox>

namespace spplan::gui {
namespace {

constexpr int kMaxEpochs = 1000;  // --epochs: 1..1000 (cli/corpus_flags.cpp)

}  // namespace

CorpusInputs::CorpusInputs(QWidget* parent) : QWidget(parent) {
  auto* row = new QHBoxLayout(this);
  row->setContentsMargins(0, 0, 0, 0);
  row->setSpacing(4);
  auto* label = new QLabel(tr("&Corpus"), this);
  row->addWidget(label);
  m_path = new QLineEdit(this);
  m_path->setReadOnly(true);
  m_path->setPlaceholderText(tr("none: one sequence of the full length"));
  m_path->setToolTip(tr("The corpus's document lengths (--lengths; spplan lengths writes them): with one, each plan's "
                        "attention is priced per document and its answer is an epoch's time and price"));
  m_path->setMinimumWidth(m_path->fontMetrics().horizontalAdvance(QStringLiteral("longalpaca-12k.lengths.csv")));
  label->setBuddy(m_path);
  row->addWidget(m_path, 1);
  m_open = new QPushButton(tr("Open lengths…"), this);
  m_open->setToolTip(tr("A CSV or JSON lengths file (docs/lengths.md)"));
  row->addWidget(m_open);
  m_clear = new QPushButton(tr("Clear"), this);
  m_clear->setToolTip(tr("Plan without a corpus"));
  row->addWidget(m_clear);
  m_packing = new QComboBox(this);
  for (const std::string& name : corpus::packing_names()) m_packing->addItem(QString::fromStdString(name));
  m_packing->setCurrentText(QString::fromStdString(corpus::to_string(corpus::Packing::kBfd)));  // the CLI's default
  m_packing->setToolTip(tr("How documents fill each sequence (--packing): concatenated and cut (wrapped), best-fit "
                           "decreasing bins (bfd), or one document a sequence, padded (none)"));
  m_packing->setAccessibleName(tr("Packing"));
  row->addWidget(m_packing);
  m_epochs = new QSpinBox(this);
  m_epochs->setRange(1, kMaxEpochs);
  m_epochs->setPrefix(tr("epochs "));
  m_epochs->setToolTip(tr("Epochs to price (--epochs); the banner gives one epoch and all of them"));
  m_epochs->setAccessibleName(tr("Epochs"));
  row->addWidget(m_epochs);

  connect(m_open, &QPushButton::clicked, this, &CorpusInputs::chooseFile);
  connect(m_clear, &QPushButton::clicked, this, [this] { setPath(QString()); });
  connect(m_packing, &QComboBox::currentIndexChanged, this, &CorpusInputs::changed);
  connect(m_epochs, &QSpinBox::valueChanged, this, &CorpusInputs::changed);
  setPath(QString());
}

void CorpusInputs::chooseFile() {
  const QString path = QFileDialog::getOpenFileName(this, tr("Open lengths"), QString(),
                                                    tr("Lengths files (*.csv *.json *.txt);;All files (*)"));
  if (!path.isEmpty()) setPath(path);
}

void CorpusInputs::setPath(const QString& path) {
  m_path->setText(path);
  m_corpus.reset();
  m_status = Status::ok();
  if (!path.isEmpty()) {
    if (Result<corpus::Corpus> read = corpus::read_lengths_file(path.toStdString()); read.ok()) {
      m_corpus = std::move(*read);
    } else {
      m_status = read.status();
    }
  }
  // As the CLI, which refuses --packing and --epochs without --lengths.
  m_packing->setEnabled(!path.isEmpty());
  m_epochs->setEnabled(!path.isEmpty());
  m_clear->setEnabled(!path.isEmpty());
  Q_EMIT changed();
}

QString CorpusInputs::path() const { return m_path->text(); }

corpus::Packing CorpusInputs::packing() const { return static_cast<corpus::Packing>(m_packing->currentIndex()); }

int CorpusInputs::epochs() const { return m_epochs->value(); }

std::map<QString, QString> CorpusInputs::texts() const {
  if (path().isEmpty()) return {};
  return {{"lengths", path()}, {"packing", m_packing->currentText()}, {"epochs", QString::number(epochs())}};
}

void CorpusInputs::setTexts(const std::map<QString, QString>& texts) {
  const auto text = [&](const char* flag) {
    const auto it = texts.find(QString::fromLatin1(flag));
    return it == texts.end() ? QString() : it->second;
  };
  if (const int i = m_packing->findText(text("packing")); i >= 0) m_packing->setCurrentIndex(i);
  bool ok = false;
  if (const int n = text("epochs").toInt(&ok); ok && n >= 1 && n <= kMaxEpochs) m_epochs->setValue(n);
  setPath(text("lengths"));
}

}  // namespace spplan::gui
