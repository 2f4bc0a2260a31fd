#include "gui/knob_pins.hpp"

#include <QCheckBox>
#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QSpinBox>

#include "planner/config/stack_flags.hpp"
#include "planner/core/args.hpp"
#include "planner/search/knob_constraints.hpp"

namespace spplan::gui {
namespace {

// What "any" reads as: no flag.
const QString kAny = QStringLiteral("any");

struct Pin {
  const char* flag;   // the CLI flag, without "--"
  const char* label;
  std::vector<const char*> values;
};

// The knobs the searches enumerate (searched_knob_flag_specs), with the values a user picks from.
// sp and cp: powers of two up to 256 (a value the heads or the GPUs refuse gets the CLI's message).
const std::vector<Pin>& pins() {
  static const std::vector<Pin> kPins{
      {"sp", "sp", {"1", "2", "4", "8", "16", "32", "64", "128", "256"}},
      {"cp", "cp", {"1", "2", "4", "8", "16", "32", "64", "128", "256"}},
      {"zero", "ZeRO", {"0", "1", "2", "3"}},
      {"offload-optimizer", "opt. offload", {"none", "cpu", "nvme"}},
      {"offload-params", "param offload", {"none", "cpu", "nvme"}},
      {"act-ckpt", "checkpoints", {"none", "full", "offload"}},
      {"tiled-mlp", "tiled MLP", {"on", "off"}},
      {"tiled-loss", "tiled loss", {"on", "off"}},
  };
  return kPins;
}

}  // namespace

KnobPins::KnobPins(QWidget* parent) : QWidget(parent) {
  auto* row = new QHBoxLayout(this);
  row->setContentsMargins(0, 0, 0, 0);
  auto* title = new QLabel(tr("Pin knobs:"), this);
  title->setToolTip(tr("Fix a knob to what your stack runs; the search varies the others (as spplan plan --sp 4 --zero 3)"));
  row->addWidget(title);
  for (const Pin& pin : pins()) {
    auto* label = new QLabel(tr(pin.label), this);
    auto* combo = new QComboBox(this);
    combo->setObjectName(QStringLiteral("pin-") + pin.flag);
    combo->addItem(kAny);
    for (const char* v : pin.values) combo->addItem(QString::fromLatin1(v));
    combo->setToolTip(tr("--%1: any lets the search choose").arg(QString::fromLatin1(pin.flag)));
    label->setBuddy(combo);
    row->addWidget(label);
    row->addWidget(combo);
    m_combos[pin.flag] = combo;
    connect(combo, &QComboBox::currentIndexChanged, this, &KnobPins::changed);
  }
  auto* batchLabel = new QLabel(tr("batch"), this);
  m_globalBatch = new QSpinBox(this);
  m_globalBatch->setObjectName(QStringLiteral("pin-global-batch"));
  m_globalBatch->setRange(0, static_cast<int>(search::kMaxGlobalBatch));
  m_globalBatch->setSpecialValueText(kAny);
  m_globalBatch->setToolTip(tr("--global-batch: sequences per optimizer step, your recipe's; every plan keeps micro "
                               "batch × accumulation × dp equal to it. \"any\": accumulation 1, so each plan's moves "
                               "with its layout"));
  batchLabel->setBuddy(m_globalBatch);
  row->addWidget(batchLabel);
  row->addWidget(m_globalBatch);
  connect(m_globalBatch, &QSpinBox::valueChanged, this, &KnobPins::changed);
  m_risky = new QCheckBox(tr("speed alone"), this);
  m_risky->setObjectName(QStringLiteral("pin-risky"));
  m_risky->setToolTip(tr("--risky: rank by speed alone. Off, every plan that leaves more GPU memory free than the "
                         "largest measured memory error ranks above every plan inside it (which may not fit when it runs)"));
  row->addWidget(m_risky);
  connect(m_risky, &QCheckBox::toggled, this, &KnobPins::changed);
  row->addStretch(1);
}

std::vector<std::string> KnobPins::flags() const {
  std::vector<std::string> words;
  for (const Pin& pin : pins()) {
    const QString value = m_combos.at(pin.flag)->currentText();
    if (value == kAny) continue;
    const std::string flag = pin.flag;
    if (flag == "tiled-mlp" || flag == "tiled-loss") {  // switches: --tiled-mlp or --no-tiled-mlp
      words.push_back(value == QStringLiteral("on") ? "--" + flag : "--no-" + flag);
    } else {
      words.push_back("--" + flag);
      words.push_back(value.toStdString());
    }
  }
  if (m_globalBatch->value() > 0) {
    words.push_back("--global-batch");
    words.push_back(std::to_string(m_globalBatch->value()));
  }
  if (m_risky->isChecked()) words.push_back("--risky");
  return words;
}

Result<search::KnobConstraints> KnobPins::constraints(PlanSpec* base, const std::vector<std::string>& stackFlags) const {
  std::vector<std::string> words = flags();
  words.insert(words.end(), stackFlags.begin(), stackFlags.end());
  std::vector<FlagSpec> specs = search::searched_knob_flag_specs();
  for (FlagSpec& f : stack_flag_specs()) specs.push_back(std::move(f));
  SPPLAN_ASSIGN_OR_RETURN(const Args args, Args::parse(words, specs));
  return search::read_constraints(args, base);
}

QComboBox* KnobPins::combo(const std::string& flag) const {
  const auto it = m_combos.find(flag);
  return it == m_combos.end() ? nullptr : it->second;
}

void KnobPins::clearPins() {
  for (auto& [flag, combo] : m_combos) combo->setCurrentIndex(0);
  m_risky->setChecked(false);
  m_globalBatch->setValue(0);
}

std::map<QString, QString> KnobPins::texts() const {
  std::map<QString, QString> pinned;
  for (const auto& [flag, combo] : m_combos) {
    if (combo->currentText() != kAny) pinned[QString::fromStdString(flag)] = combo->currentText();
  }
  if (m_risky->isChecked()) pinned[QStringLiteral("risky")] = QStringLiteral("on");
  if (m_globalBatch->value() > 0) pinned[QStringLiteral("global-batch")] = QString::number(m_globalBatch->value());
  return pinned;
}

void KnobPins::setTexts(const std::map<QString, QString>& texts) {
  clearPins();
  for (const auto& [flag, text] : texts) {
    if (flag == QStringLiteral("risky")) m_risky->setChecked(text == QStringLiteral("on"));
    if (flag == QStringLiteral("global-batch")) m_globalBatch->setValue(text.toInt());
    QComboBox* box = combo(flag.toStdString());
    if (box == nullptr) continue;
    if (const int i = box->findText(text); i >= 0) box->setCurrentIndex(i);
  }
}

}  // namespace spplan::gui
