#include "gui/main_window.hpp"

#include <QCloseEvent>
#include <QCoreApplication>
#include <QComboBox>
#include <QDir>
#include <QFileDialog>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QPushButton>
#include <QSettings>
#include <QShortcut>
#include <QSpinBox>
#include <QSplitter>
#include <QTabWidget>
#include <QTableView>
#include <QTimer>
#include <QVBoxLayout>

#include "gui/check_view.hpp"
#include "gui/corpus_inputs.hpp"
#include "gui/corpus_model.hpp"
#include "gui/export_bar.hpp"
#include "gui/knob_pins.hpp"
#include "gui/optimizer_inputs.hpp"
#include "gui/plan_table_model.hpp"
#include "gui/plan_tabs.hpp"
#include "gui/rent_model.hpp"
#include "gui/session.hpp"
#include "gui/stack_choices.hpp"
#include "planner/accuracy/memory_verdict.hpp"
#include "planner/config/loaders.hpp"
#include "planner/core/output_file.hpp"
#include "planner/config/plan_rules.hpp"
#include "planner/config/renter_settings.hpp"
#include "planner/config/stack_flags.hpp"
#include "planner/config/trainer_rules.hpp"
#include "planner/core/parse.hpp"
#include "planner/corpus/plan_documents.hpp"
#include "planner/costmodel/priced_model.hpp"
#include "planner/search/search.hpp"

namespace spplan::gui {
namespace {

constexpr int kDebounceMs = 150;
constexpr int kPlanRowsShown = 10;  // plan rows the table shows whole at 1280 x 800
constexpr int64_t kMaxSeqGranularity = 1024;  // as `spplan max-seq`: whole k-tokens

QString stringOf(const std::string& s) { return QString::fromStdString(s); }

QTableView* newTable(QAbstractItemModel* model, int visibleColumns, QWidget* parent) {
  auto* table = new QTableView(parent);
  table->setModel(model);
  for (int c = visibleColumns; c < model->columnCount(); ++c) table->setColumnHidden(c, true);
  table->setSelectionBehavior(QAbstractItemView::SelectRows);
  table->setSelectionMode(QAbstractItemView::SingleSelection);
  table->verticalHeader()->hide();
  table->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
  table->setAlternatingRowColors(true);
  return table;
}

}  // namespace

MainWindow::MainWindow(QWidget* parent)
    : QMainWindow(parent),
      m_planModel(new PlanTableModel(this)),
      m_debounce(new QTimer(this)) {
  setWindowTitle(tr("spplan: Ulysses sequence-parallel planner"));
  m_debounce->setSingleShot(true);
  m_debounce->setInterval(kDebounceMs);
  connect(m_debounce, &QTimer::timeout, this, &MainWindow::recomputeNow);
  if (auto trust = TrustTable::loadDir(TrustTable::defaultDir()); trust.ok()) {
    m_trust = std::move(*trust);
  } else {
    m_trustError = stringOf(trust.status().message());
  }

  auto* central = new QWidget(this);
  auto* layout = new QVBoxLayout(central);
  layout->addWidget(buildInputs());
  m_optimizer = new OptimizerInputs(central);
  connect(m_optimizer, &OptimizerInputs::changed, this, &MainWindow::scheduleRecompute);
  m_stack = new StackChoices(central);  // at the optimizer rows' right end: the pins row is full
  connect(m_stack, &StackChoices::changed, this, &MainWindow::scheduleRecompute);
  auto* optimizerRow = new QHBoxLayout;
  optimizerRow->addWidget(m_optimizer, 1);
  optimizerRow->addWidget(m_stack);
  layout->addLayout(optimizerRow);
  m_pins = new KnobPins(central);
  connect(m_pins, &KnobPins::changed, this, &MainWindow::scheduleRecompute);
  layout->addWidget(m_pins);
  m_corpus = new CorpusInputs(central);
  connect(m_corpus, &CorpusInputs::changed, this, &MainWindow::scheduleRecompute);
  layout->addWidget(m_corpus);
  m_statusLabel = new QLabel(central);
  m_statusLabel->setWordWrap(true);
  m_statusLabel->setTextInteractionFlags(Qt::TextSelectableByMouse);
  layout->addWidget(m_statusLabel);
  m_modelLabel = new QLabel(central);  // what the costmodel prices the model as, as `spplan estimate` says
  m_modelLabel->setWordWrap(true);
  m_modelLabel->setTextInteractionFlags(Qt::TextSelectableByMouse);
  m_modelLabel->setStyleSheet("color: #444;");
  layout->addWidget(m_modelLabel);
  m_bannerLabel = new QLabel(central);
  m_bannerLabel->setWordWrap(true);
  m_bannerLabel->setMargin(6);
  layout->addWidget(m_bannerLabel);
  m_trustLabel = new QLabel(central);
  m_trustLabel->setWordWrap(true);
  m_trustLabel->setStyleSheet("color: #404080;");
  layout->addWidget(m_trustLabel);

  m_table = newTable(m_planModel, PlanTableModel::VisibleColumnCount, central);
  m_table->setAccessibleName(tr("Ranked plans"));
  // Ten plans visible at 1280 x 800, the leading ones a renter compares: compact rows and the
  // table's height for them; the tabs below (the charts) take what is left.
  const int rowPx = m_table->fontMetrics().height() + 6;
  m_table->verticalHeader()->setMinimumSectionSize(rowPx);
  m_table->verticalHeader()->setDefaultSectionSize(rowPx);
  m_table->setMinimumHeight(m_table->horizontalHeader()->sizeHint().height() + kPlanRowsShown * rowPx +
                            2 * m_table->frameWidth());
  // Durations ("33 min 33 s", "11 h 35 min") are the widest cells: their columns take their text's
  // width, the others share what is left (an even share cut an epoch to "31 min 5...").
  for (int c : {PlanTableModel::StepSecondsColumn, PlanTableModel::EpochColumn}) {
    m_table->horizontalHeader()->setSectionResizeMode(c, QHeaderView::ResizeToContents);
  }
  showCorpusColumns(false);
  // A header click sorts (PlanTableModel::sort); the search's ranking first.
  m_table->horizontalHeader()->setSortIndicator(PlanTableModel::RankColumn, Qt::AscendingOrder);
  m_table->setSortingEnabled(true);
  // A sort moves the rows under the views: they follow the selected plan to its new row (the
  // memory chart maps a row number, the banner reads one).
  connect(m_planModel, &QAbstractItemModel::layoutChanged, this, [this] {
    const QModelIndex current = m_table->currentIndex();
    m_selectedRow = -1;  // the same row number may now hold another plan
    selectRow(current.isValid() ? current.row() : -1);
  });
  connect(m_table->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
          [this](const QModelIndex& current) { selectRow(current.isValid() ? current.row() : -1); });
  m_exportBar = new ExportBar(central);
  connect(m_exportBar, &ExportBar::exported, this, &MainWindow::showMessage);
  auto* tableBox = new QWidget(central);
  auto* tableLayout = new QVBoxLayout(tableBox);
  tableLayout->setContentsMargins(0, 0, 0, 0);
  tableLayout->addWidget(m_table, 1);
  tableLayout->addWidget(m_exportBar);

  auto* split = new QSplitter(Qt::Vertical, central);
  split->addWidget(tableBox);
  m_tabs = new PlanTabs(m_planModel, m_trust ? &*m_trust : nullptr, central);
  connect(m_tabs, &PlanTabs::message, this, &MainWindow::showMessage);
  split->addWidget(m_tabs);
  split->setStretchFactor(0, 0);  // the table keeps its ten rows; the charts give way
  split->setStretchFactor(1, 1);
  layout->addWidget(split, 1);
  setCentralWidget(central);
  addShortcuts();
  setTabOrder(m_saveButton, m_table);
  setTabOrder(m_table, m_exportBar);
  setTabOrder(m_exportBar, m_tabs);
}

QWidget* MainWindow::buildInputs() {
  auto* box = new QWidget(this);
  auto* row = new QHBoxLayout(box);
  row->setContentsMargins(0, 0, 0, 0);
  row->setSpacing(4);  // twenty widgets in one row, within a 1280-pixel window
  auto addLabeled = [&](const QString& label, QWidget* w) {
    auto* l = new QLabel(label, box);
    l->setBuddy(w);  // Alt + the underlined letter moves here
    row->addWidget(l);
    row->addWidget(w);
  };
  m_modelCombo = new QComboBox(box);
  m_modelCombo->setEditable(true);  // a preset name or a path to a TOML / config.json / model folder
  for (const auto& name : model_presets()) m_modelCombo->addItem(stringOf(name));
  m_modelCombo->setMinimumContentsLength(14);
  addLabeled(tr("&Model"), m_modelCombo);
  m_openButton = new QPushButton(tr("Open config…"), box);
  m_openButton->setToolTip(tr("A model TOML or a Hugging Face config.json (Ctrl+O)"));
  row->addWidget(m_openButton);
  m_gpuCombo = new QComboBox(box);
  m_gpuCombo->setEditable(true);
  for (const auto& name : gpu_presets()) m_gpuCombo->addItem(stringOf(name));
  addLabeled(tr("&GPU"), m_gpuCombo);
  m_gpusSpin = new QSpinBox(box);
  m_gpusSpin->setRange(1, 1 << 24);
  addLabeled(tr("GP&Us"), m_gpusSpin);
  m_perNodeSpin = new QSpinBox(box);
  m_perNodeSpin->setRange(1, 1 << 16);
  addLabeled(tr("per &node"), m_perNodeSpin);
  m_seqEdit = new QLineEdit(box);
  m_seqEdit->setPlaceholderText(tr("128k, 1.5M, 1.5e7, 131072"));
  m_seqEdit->setMaximumWidth(120);
  // "15000000" whole: ALST's 15M typed as digits was clipped to "5000000".
  m_seqEdit->setMinimumWidth(m_seqEdit->fontMetrics().horizontalAdvance(QStringLiteral("15000000")) + 8);
  addLabeled(tr("Se&quence"), m_seqEdit);
  m_trainerCombo = new QComboBox(box);  // the loop around DeepSpeed (--trainer)
  for (const auto& name : trainer_names()) m_trainerCombo->addItem(stringOf(name));
  addLabeled(tr("&Trainer"), m_trainerCombo);
  m_priceEdit = new QLineEdit(box);
  m_priceEdit->setMaximumWidth(70);
  m_priceEdit->setToolTip(tr("What one GPU costs per hour, in $ (--price-per-gpu-hour); empty: the GPU file's price"));
  addLabeled(tr("$/GPU-&h"), m_priceEdit);
  m_headroomEdit = new QLineEdit(box);
  m_headroomEdit->setMaximumWidth(50);
  m_headroomEdit->setPlaceholderText(QStringLiteral("0"));
  m_headroomEdit->setToolTip(tr("GPU memory every plan must leave free, % of the device (--headroom, 0 to 50)"));
  addLabeled(tr("head&room %"), m_headroomEdit);
  row->addStretch(1);
  m_saveButton = new QPushButton(tr("Save plan…"), box);
  m_saveButton->setToolTip(tr("Write the selected plan as a plan TOML (Ctrl+S)"));
  m_saveButton->setEnabled(false);
  row->addWidget(m_saveButton);

  connect(m_openButton, &QPushButton::clicked, this, &MainWindow::openModelConfig);
  connect(m_saveButton, &QPushButton::clicked, this, &MainWindow::savePlan);
  connect(m_modelCombo, &QComboBox::currentTextChanged, this, &MainWindow::scheduleRecompute);
  connect(m_gpuCombo, &QComboBox::currentTextChanged, this, &MainWindow::onGpuChanged);
  connect(m_gpusSpin, &QSpinBox::valueChanged, this, &MainWindow::scheduleRecompute);
  connect(m_perNodeSpin, &QSpinBox::valueChanged, this, &MainWindow::scheduleRecompute);
  connect(m_seqEdit, &QLineEdit::textChanged, this, &MainWindow::scheduleRecompute);
  connect(m_trainerCombo, &QComboBox::currentIndexChanged, this, &MainWindow::scheduleRecompute);
  connect(m_priceEdit, &QLineEdit::textChanged, this, &MainWindow::scheduleRecompute);
  connect(m_headroomEdit, &QLineEdit::textChanged, this, &MainWindow::scheduleRecompute);
  // Reading order, left to right.
  const QWidget* order[] = {m_modelCombo,   m_openButton, m_gpuCombo,     m_gpusSpin,  m_perNodeSpin,
                            m_seqEdit,      m_trainerCombo, m_priceEdit, m_headroomEdit, m_saveButton};
  for (size_t i = 0; i + 1 < std::size(order); ++i) {
    setTabOrder(const_cast<QWidget*>(order[i]), const_cast<QWidget*>(order[i + 1]));
  }
  return box;
}

void MainWindow::addShortcuts() {
  for (int i = 0; i < PlanTabs::TabCount; ++i) {
    auto* shortcut = new QShortcut(QKeySequence(Qt::CTRL | (Qt::Key_1 + i)), this);
    connect(shortcut, &QShortcut::activated, this, [this, i] { m_tabs->setCurrentIndex(i); });
  }
  connect(new QShortcut(QKeySequence(Qt::Key_F5), this), &QShortcut::activated, this, &MainWindow::recomputeNow);
  connect(new QShortcut(QKeySequence::Open, this), &QShortcut::activated, this, &MainWindow::openModelConfig);
  connect(new QShortcut(QKeySequence::Save, this), &QShortcut::activated, this, &MainWindow::savePlan);
  connect(new QShortcut(QKeySequence(Qt::CTRL | Qt::Key_L), this), &QShortcut::activated, this, [this] {
    m_tabs->setCurrentIndex(PlanTabs::CheckTab);
    m_tabs->checkView()->chooseLogs();
  });
  connect(new QShortcut(QKeySequence::Quit, this), &QShortcut::activated, this, &QWidget::close);
}

void MainWindow::setInputs(const GuiOptions& options) {
  m_modelCombo->setCurrentText(stringOf(options.model));
  m_gpuCombo->setCurrentText(stringOf(options.gpu));
  onGpuChanged(m_gpuCombo->currentText());  // GPUs per node from the GPU, even if the text did not change
  if (auto gpus = parse_int("--gpus", options.gpus, 1, 1 << 24); gpus.ok()) m_gpusSpin->setValue(static_cast<int>(*gpus));
  if (options.gpusPerNode) {
    if (auto k = parse_int("--gpus-per-node", *options.gpusPerNode, 1, 1 << 16); k.ok()) {
      m_perNodeSpin->setValue(static_cast<int>(*k));
    }
  }
  m_seqEdit->setText(stringOf(options.seq));
  if (options.packing) m_corpus->packingCombo()->setCurrentText(stringOf(*options.packing));
  m_corpus->setPath(options.lengths ? stringOf(*options.lengths) : QString());
  scheduleRecompute();
}

bool MainWindow::restoreSession() {
  QSettings settings;
  const SessionState s = loadSession(settings);
  if (s.model.isEmpty()) return false;
  m_modelCombo->setCurrentText(s.model);
  m_gpuCombo->setCurrentText(s.gpu);
  onGpuChanged(s.gpu);
  if (s.gpus > 0) m_gpusSpin->setValue(s.gpus);
  if (s.gpusPerNode > 0) m_perNodeSpin->setValue(s.gpusPerNode);
  m_seqEdit->setText(s.seq);
  if (const int i = m_trainerCombo->findText(s.trainer); i >= 0) m_trainerCombo->setCurrentIndex(i);
  m_priceEdit->setText(s.price);
  m_headroomEdit->setText(s.headroom);
  m_optimizer->setTexts(s.optimizer);
  m_pins->setTexts(s.pins);
  m_stack->setTexts(s.stack);
  m_corpus->setTexts(s.corpus);
  scheduleRecompute();
  return true;
}

SessionState MainWindow::sessionState() const {
  return {m_modelCombo->currentText().trimmed(), m_gpuCombo->currentText().trimmed(), m_gpusSpin->value(),
          m_perNodeSpin->value(), m_seqEdit->text().trimmed(), m_trainerCombo->currentText(),
          m_priceEdit->text().trimmed(), m_headroomEdit->text().trimmed(), m_optimizer->texts(),
          m_pins->texts(), m_stack->texts(), m_corpus->texts()};
}

void MainWindow::closeEvent(QCloseEvent* event) {
  QSettings settings;
  saveSession(settings, sessionState());
  QMainWindow::closeEvent(event);
}

void MainWindow::scheduleRecompute() { m_debounce->start(); }

void MainWindow::onGpuChanged(const QString& text) {
  if (auto gpu = load_gpu(text.toStdString()); gpu.ok()) {
    m_perNodeSpin->setValue(static_cast<int>(gpu->gpus_per_node));
    m_priceEdit->setPlaceholderText(QString::number(gpu->price_per_gpu_hour, 'f', 2));  // the file's, until one is typed
  }
  scheduleRecompute();
}

Result<PlanSpec> MainWindow::baseFromInputs() const {
  // As cmd_plan: the lengths file is read (corpus_options) before the plan's flags.
  SPPLAN_RETURN_IF_ERROR(m_corpus->status());
  // The order and the words of cli/common.cpp's plan_from_flags().
  PlanSpec plan;
  SPPLAN_ASSIGN_OR_RETURN(plan.model, load_model(m_modelCombo->currentText().trimmed().toStdString()));
  SPPLAN_ASSIGN_OR_RETURN(plan.cluster.gpu, load_gpu(m_gpuCombo->currentText().trimmed().toStdString()));
  plan.cluster.gpu.gpus_per_node = m_perNodeSpin->value();
  plan.cluster.num_gpus = m_gpusSpin->value();
  SPPLAN_RETURN_IF_ERROR(check_cluster_shape(plan.cluster, flag_where));  // as plan_from_flags: whole nodes
  SPPLAN_ASSIGN_OR_RETURN(plan.seq_len, parse_seq_len("--seq", m_seqEdit->text().trimmed().toStdString()));
  SPPLAN_ASSIGN_OR_RETURN(plan.stack, load_trainer(m_trainerCombo->currentText().toStdString(), "--trainer"));
  // After the trainer: the choices override its defaults, as the CLI's --attention and --freeze-encoders.
  SPPLAN_ASSIGN_OR_RETURN(const Args stack, Args::parse(m_stack->flags(), stack_flag_specs()));
  SPPLAN_RETURN_IF_ERROR(apply_stack_flags(stack, &plan.stack));
  plan.attention_named = stack.has("attention");
  settle_layout_attention(&plan);
  hold_against_measured(&plan, m_trust ? &m_trust->measured() : nullptr);  // as plan_from_flags: the ranking's margin
  SPPLAN_ASSIGN_OR_RETURN(plan.optimizer, m_optimizer->spec());  // the CLI's recipe and flags
  // The CLI's readers, so the words are the CLI's (planner/config/renter_settings.hpp).
  if (const std::string price = m_priceEdit->text().trimmed().toStdString(); !price.empty()) {
    SPPLAN_RETURN_IF_ERROR(apply_price(price, std::nullopt, &plan.cluster.gpu));
  }
  if (const std::string headroom = m_headroomEdit->text().trimmed().toStdString(); !headroom.empty()) {
    SPPLAN_RETURN_IF_ERROR(apply_headroom(headroom, &plan));
  }
  return plan;
}

void MainWindow::recomputeNow() {
  m_debounce->stop();
  Result<PlanSpec> base = baseFromInputs();
  if (!base.ok()) {
    showError(stringOf(base.status().message()));
    return;
  }
  // As cmd_plan's apply_corpus, before the knob flags are read: at the sequence length as typed.
  std::optional<corpus::PackedCorpus> packed;
  const corpus::Corpus* lengths = m_corpus->corpus();
  if (lengths != nullptr) packed = corpus::pack_into_plan(*lengths, m_corpus->packing(), &*base);
  m_stack->setModel(base->model.has_encoders(), record_of(*base).facts.freezes_encoders);
  // As spplan plan's knob flags, with the stack's (a named kernel stays named).
  const Result<search::KnobConstraints> pinned = m_pins->constraints(&*base, m_stack->flags());
  if (!pinned.ok()) {
    showError(stringOf(pinned.status().message()));
    return;
  }
  m_planModel->setBase(*base, *pinned);
  if (m_planModel->evaluated() == 0) {  // the pins leave nothing to price: the CLI's exit-2 line
    const QString why = m_planModel->whyNone();  // a copy: showError clears the model
    showError(why);
    return;
  }
  m_tabs->setBase(*base, *pinned);
  if (packed) {
    m_tabs->corpusModel()->setCorpus(*lengths, m_corpus->packing(), base->seq_len, *packed);
  } else {
    m_tabs->corpusModel()->clear();
  }
  showCorpusColumns(packed.has_value());
  m_selectedRow = -1;  // row numbers now name new plans
  m_statusLabel->setStyleSheet("color: #444;");
  const QLocale english(QLocale::English);  // one number format on the screen: 131,072
  m_statusLabel->setText(tr("%1 on %2× %3 (%4 per node) at %5 tokens, $%6 per hour at $%7 per GPU-hour: %8 of %9 "
                            "knob sets fit")
                             .arg(stringOf(base->model.name))
                             .arg(base->cluster.num_gpus)
                             .arg(stringOf(base->cluster.gpu.name))
                             .arg(base->cluster.gpu.gpus_per_node)
                             .arg(english.toString(static_cast<qlonglong>(base->seq_len)))
                             .arg(english.toString(base->cluster.gpu.price_per_gpu_hour * base->cluster.num_gpus, 'f', 2))
                             .arg(english.toString(base->cluster.gpu.price_per_gpu_hour, 'f', 2))
                             .arg(m_planModel->fitCount())
                             .arg(m_planModel->evaluated()));
  // What `spplan plan` prints under its table: why the leading layout won, as the CLI says it.
  if (!m_planModel->layoutReason().isEmpty()) {
    m_statusLabel->setText(m_statusLabel->text() + tr("\nwhy this layout: %1").arg(m_planModel->layoutReason()));
  }
  const std::string gpu = m_gpuCombo->currentText().trimmed().toStdString();
  m_trustLabel->setText(m_trust ? m_trust->windowText(gpu, m_trainerCombo->currentText().toStdString())
                                : tr("measured accuracy unknown: %1").arg(m_trustError));
  if (m_planModel->rowCount() > 0) {
    m_table->selectRow(0);  // emits currentRowChanged -> selectRow(0)
    selectRow(0);           // no-op then; needed if the view kept row 0 current
  } else {
    selectRow(-1);
    m_bannerLabel->setStyleSheet("background: #fde2c8; color: #7a3000; font-weight: bold;");
    m_bannerLabel->setText(tr("Does not fit: no valid knob set for this model on %1 GPUs").arg(base->cluster.num_gpus));
  }
}

void MainWindow::showError(const QString& message) {
  m_selectedRow = -1;
  m_planModel->clear();
  m_tabs->setBase(std::nullopt);
  m_tabs->corpusModel()->clear();
  selectRow(-1);
  m_statusLabel->setStyleSheet("color: #c00000; font-weight: bold;");
  m_statusLabel->setText(message);
  m_bannerLabel->setStyleSheet("");
  m_bannerLabel->clear();
  m_trustLabel->clear();
}

void MainWindow::selectRow(int row) {
  if (row == m_selectedRow && row >= 0) return;
  m_selectedRow = row;
  m_tabs->setSelected(row, m_gpuCombo->currentText().trimmed().toStdString());
  const bool fits = row >= 0 && m_planModel->planAt(row).estimate.fits;
  m_exportBar->setPlan(fits ? &m_planModel->planAt(row).plan : nullptr);
  m_saveButton->setEnabled(fits);
  if (row >= 0) {
    updateBanner(row);
    showPricedModel(m_planModel->planAt(row).plan);
  } else {
    m_modelLabel->clear();  // no plan, no layout to say the encoders' memory on
  }
}

void MainWindow::showPricedModel(const PlanSpec& plan) {
  QStringList lines;
  for (const std::string& line : costmodel::priced_model_lines(plan).present()) lines << stringOf(line);
  m_modelLabel->setText(lines.join(QStringLiteral("   ·   ")));
}

void MainWindow::updateBanner(int row) {
  const search::RankedPlan& selected = m_planModel->planAt(row);
  const int64_t maxSeq = search::max_seq_fixed(selected.plan, kMaxSeqGranularity);
  const QString maxSeqText = maxSeq > 0 ? tr("longest sequence with the selected plan's knobs: %1 tokens").arg(QString::fromStdString(seq_text(maxSeq)))
                                        : tr("the selected plan's knobs fit no sequence length");
  const bool hasCorpus = m_planModel->hasCorpus();
  const QModelIndex best =
      m_planModel->index(0, hasCorpus ? PlanTableModel::RealTokensPerSecondColumn : PlanTableModel::TokensPerSecondColumn);
  if (m_planModel->anyFits()) {
    // The selected plan's margin against the measured memory error of its trainer on its GPU:
    // green beyond it, amber inside it (planner/accuracy/memory_verdict.hpp, as the CLI's verdict).
    const MemoryVerdict verdict =
        plan_verdict(selected.plan, selected.estimate, m_trust ? &m_trust->measured() : nullptr);
    const double tokensPerS = m_planModel->data(best, PlanTableModel::ValueRole).toDouble();
    const bool amber = verdict.verdict == Verdict::kFitsInsideError;
    m_bannerLabel->setStyleSheet(amber ? "background: #fff1b8; color: #6b4f00; font-weight: bold;"
                                       : "background: #d6f0d6; color: #105010; font-weight: bold;");
    QString text = tr("%1: best plan %2 %3   ·   selected plan %4   ·   %5")
                       .arg(amber ? tr("Fits inside the measured error") : tr("Fits"),
                            QLocale(QLocale::English).toString(tokensPerS, 'f', 0),
                            hasCorpus ? tr("real tokens/s") : tr("tokens/s"), stringOf(verdict.words), maxSeqText);
    if (hasCorpus && selected.estimate.fits) text += QStringLiteral("   ·   ") + epochText(selected.estimate);
    // Safe first, as spplan plan: the faster plan the ranking put below the safe ones, named.
    if (!m_planModel->riskyNote().isEmpty()) text += tr("   ·   fastest risky plan: %1").arg(m_planModel->riskyNote());
    m_bannerLabel->setText(text);
  } else {
    m_bannerLabel->setStyleSheet("background: #fde2c8; color: #7a3000; font-weight: bold;");
    m_bannerLabel->setText(tr("Does not fit: %1   ·   %2")
                               .arg(stringOf(m_planModel->planAt(0).estimate.reason()), maxSeqText));
  }
}

QString MainWindow::epochText(const costmodel::Estimate& e) const {
  // The CLI's words (cmd_plan: "epoch: ...", then "3 epochs: ..." past one).
  const auto priced = [](double seconds, double usd) {
    return QString::fromStdString(duration_text(seconds)) + ", " + dollarsText(usd);
  };
  QString text = tr("epoch: %1").arg(priced(e.epoch_s, e.usd_per_epoch));
  if (const int epochs = m_corpus->epochs(); epochs > 1) {
    text += tr("; %1 epochs: %2").arg(epochs).arg(priced(e.epoch_s * epochs, e.usd_per_epoch * epochs));
  }
  return text;
}

void MainWindow::showCorpusColumns(bool corpus) {
  m_table->setColumnHidden(PlanTableModel::TokensPerSecondColumn, corpus);
  m_table->setColumnHidden(PlanTableModel::UsdPerMtokColumn, corpus);
  for (int c : {PlanTableModel::RealTokensPerSecondColumn, PlanTableModel::EpochColumn, PlanTableModel::UsdPerEpochColumn}) {
    m_table->setColumnHidden(c, !corpus);
  }
}

void MainWindow::openModelConfig() {
  const QString path = QFileDialog::getOpenFileName(this, tr("Open model config"), QString(),
                                                    tr("Model configs (*.toml *.json);;All files (*)"));
  if (!path.isEmpty()) m_modelCombo->setCurrentText(path);
}

void MainWindow::savePlan() {
  const QModelIndex current = m_table->currentIndex();
  if (!current.isValid() || !m_planModel->planAt(current.row()).estimate.fits) return;
  const QString path = QFileDialog::getSaveFileName(this, tr("Save plan"), QStringLiteral("plan.toml"),
                                                    tr("Plan files (*.toml)"));
  if (path.isEmpty()) return;
  const Status written = savePlanTo(path);
  showMessage(written.is_ok() ? tr("wrote %1").arg(path) : stringOf(written.message()), written.is_ok());
}

Status MainWindow::savePlanTo(const QString& path) {
  const QModelIndex current = m_table->currentIndex();
  if (!current.isValid() || !m_planModel->planAt(current.row()).estimate.fits) {
    return Status::invalid("save plan: no plan selected (allowed: select a plan that fits)");
  }
  return write_file_atomically(path.toStdString(), plan_to_toml(m_planModel->planAt(current.row()).plan));
}

void MainWindow::showMessage(const QString& message, bool ok) {
  m_statusLabel->setStyleSheet(ok ? "color: #105010;" : "color: #c00000; font-weight: bold;");
  m_statusLabel->setText(message);
}

Status MainWindow::saveScreenshots(const QString& dir) {
  const int current = m_tabs->currentIndex();
  for (int i = 0; i < PlanTabs::TabCount; ++i) {
    m_tabs->setCurrentIndex(i);  // the rent tab prices itself when shown, off the GUI thread
    m_tabs->rentModel()->finishPricing();
    QCoreApplication::processEvents();
    const QString path = QDir(dir).filePath(QString::fromLatin1(PlanTabs::tabFileName(i)) + ".png");
    if (!grab().save(path, "PNG")) {
      return Status::invalid("--screenshots: value \"" + dir.toStdString() + "\": " + path.toStdString() +
                             " cannot be written (allowed: a writable folder)");
    }
  }
  m_tabs->setCurrentIndex(current);
  return Status::ok();
}

SeqSweepModel* MainWindow::sweepModel() const { return m_tabs->sweepModel(); }
StepTimelineView* MainWindow::timeline() const { return m_tabs->timeline(); }

}  // namespace spplan::gui
