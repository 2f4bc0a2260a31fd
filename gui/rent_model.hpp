// RentModel: "what to rent", a view of search::rent_options (planner/search/rent.hpp, which
// `spplan rent` prints too): one row per GPU preset and node shape with the best plan's price per
// million tokens, step time and tokens/s, and the longest sequence any knob set fits. The cheapest
// row (lowest $/Mtok) and the fastest (highest tokens/s) are marked, and so is the user's own GPU
// count (search::rent_options_with_own), added when no preset row has it. The table shows the visible
// columns; RentChartView maps the hidden numeric ones.
#pragma once

#include <QAbstractTableModel>
#include <QFutureWatcher>
#include <iterator>
#include <optional>
#include <utility>
#include <vector>

#include "planner/accuracy/measured_accuracy.hpp"
#include "planner/search/rent.hpp"

namespace spplan::gui {

class TrustTable;

// `value` with `digits` significant digits and no exponent: 0.000412, 1.23, 45.6, 1234.
QString significantText(double value, int digits);

class RentModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  enum Column {
    GpuColumn, NodesColumn, GpusColumn, GroupColumn, UsdPerMtokColumn, StepSecondsColumn, TokensPerSecondColumn,
    HostGibColumn, MaxSeqColumn, KnobsColumn, TrustColumn, MarkColumn,
    // Hidden: numbers for the chart's mapper (0 where nothing fits), in the chart's metric order.
    ChartUsdPerMtokColumn, ChartStepSecondsColumn, ChartMaxSeqKiloColumn,
    ColumnCount
  };
  static constexpr int VisibleColumnCount = ChartUsdPerMtokColumn;
  static constexpr int ValueRole = Qt::UserRole;  // unrounded number (NaN where nothing fits)
  // The node counts of each preset: search::RentShapes' default.
  static int nodeShapeCount() { return static_cast<int>(search::RentShapes{}.nodes.size()); }

  explicit RentModel(QObject* parent = nullptr);
  ~RentModel() override;

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

  // Replaces every row: `base`'s model, seq_len and stack on each preset x node shape.
  void setBase(const PlanSpec& base, const search::KnobConstraints& constraints = {});
  // The same, priced off the GUI thread: the rows are replaced when the pricing ends (priced()),
  // so a re-plan never waits for every preset's searches (120-145 ms at 256 GPUs on 2 cores).
  // One pricing runs at a time; a call while one runs replaces what is asked next, and the
  // running one's result is dropped: the rows always end as the last call's.
  void setBaseAsync(const PlanSpec& base, const search::KnobConstraints& constraints = {});
  bool isPricing() const { return !m_shown; }
  // Waits for the pricing asked last and shows it (screenshots, tests, the benchmark).
  void finishPricing();
  // The measured accuracy shown per row (its GPU's); null: the column is empty. Not owned.
  void setTrust(const TrustTable* trust) { m_trust = trust; }
  void clear();

  int cheapestRow() const { return m_cheapest; }  // -1 when nothing fits anywhere
  int fastestRow() const { return m_fastest; }
  QString rowLabel(int row) const;                // "h100-80gb 2x8"
  bool isOwnRow(int row) const { return m_rows.at(static_cast<size_t>(row)).own; }
  // What each column means (also the header's tooltip).
  static QString headerToolTip(int section);

 Q_SIGNALS:
  void pricingStarted();
  void priced();  // the rows are the last call's

 private:
  using Row = search::RentOption;
  // What one pricing reads: its own copies, the measured accuracy included (a worker may still run
  // while the window that owns the trust table is torn down; ~RentModel waits for it).
  struct Request {
    PlanSpec base;
    search::KnobConstraints constraints;
    std::optional<MeasuredAccuracy> accuracy;
  };
  Request request(const PlanSpec& base, const search::KnobConstraints& constraints) const;
  static search::RentTable price(const Request& request);
  void show(search::RentTable table);
  void startPricing(Request request);
  void showPricedOrNext();  // the finished pricing's rows, or the pricing asked meanwhile
  void onPriced();
  QFutureWatcher<search::RentTable> m_watcher;
  bool m_shown = true;            // the last pricing started has been shown
  std::optional<Request> m_next;  // asked while a pricing ran
  QString maxSeqMargin(const std::string& gpu) const;  // " ±4%": the measured memory error on `gpu`, or ""
  std::vector<Row> m_rows;
  int m_cheapest = -1;
  int m_fastest = -1;
  const TrustTable* m_trust = nullptr;
};

}  // namespace spplan::gui
