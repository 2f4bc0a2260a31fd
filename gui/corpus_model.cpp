#include "gui/corpus_model.hpp"

#include <cmath>

#include "planner/core/parse.hpp"
#include "planner/corpus/corpus_text.hpp"

namespace spplan::gui {
namespace {

// Bin k's lower edge: the first whole length at or above 2^(k / kBinsPerDoubling).
int64_t binEdge(int k) {
  return static_cast<int64_t>(std::ceil(std::exp2(static_cast<double>(k) / CorpusModel::kBinsPerDoubling)));
}

QString countText(double count) { return QString::fromStdString(count_text(count)); }

}  // namespace

CorpusModel::CorpusModel(QObject* parent) : QAbstractTableModel(parent) {}

int CorpusModel::rowCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : static_cast<int>(m_bins.size()); }

int CorpusModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant CorpusModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) return {};
  if (role == Qt::TextAlignmentRole) return QVariant::fromValue(Qt::AlignRight | Qt::AlignVCenter);
  if (role != Qt::DisplayRole && role != ValueRole) return {};
  const Bin& bin = m_bins[static_cast<size_t>(index.row())];
  double value = 0;
  switch (index.column()) {
    case LowColumn: value = static_cast<double>(bin.low); break;
    case HighColumn: value = static_cast<double>(bin.high); break;
    case DocumentsColumn: value = static_cast<double>(bin.documents); break;
    case TokensColumn: value = bin.tokens; break;
    default: return {};
  }
  return role == ValueRole ? QVariant(value) : QVariant(countText(value));
}

QVariant CorpusModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (role != Qt::DisplayRole) return {};
  if (orientation == Qt::Vertical) return section + 1;
  static const char* const kHeaders[ColumnCount] = {"from tokens", "below tokens", "documents", "tokens"};
  if (section < 0 || section >= ColumnCount) return {};
  return QString::fromLatin1(kHeaders[section]);
}

void CorpusModel::setCorpus(const corpus::Corpus& c, corpus::Packing packing, int64_t seq_len,
                            const corpus::PackedCorpus& packed) {
  beginResetModel();
  m_bins.clear();
  m_seqLen = seq_len;
  m_summary = QString::fromStdString(corpus::packed_text(c, packing, seq_len, packed));
  m_longerText = QString::fromStdString(corpus::longer_text(c, packing, seq_len, packed));
  m_documents = c.documents();
  m_longer = m_documents - c.documents_within(seq_len);
  const int64_t longest = c.longest();
  // The bins' edges, each once (below 8 tokens several k share one), to past the longest.
  std::vector<int64_t> edges;
  for (int k = 0; edges.empty() || edges.back() <= longest; ++k) {
    if (edges.empty() || binEdge(k) > edges.back()) edges.push_back(binEdge(k));
  }
  size_t bin = 0;  // the bin of the length at hand: lengths ascend, so each bin is passed once
  for (const auto& [length, count] : c.length_counts) {
    while (edges[bin + 1] <= length) {
      ++bin;
      if (!m_bins.empty()) m_bins.push_back({edges[bin], edges[bin + 1]});  // empty until a length lands
    }
    if (m_bins.empty()) m_bins.push_back({edges[bin], edges[bin + 1]});
    m_bins.back().documents += count;
    m_bins.back().tokens += static_cast<double>(length) * static_cast<double>(count);
  }
  endResetModel();
}

void CorpusModel::clear() {
  beginResetModel();
  m_bins.clear();
  m_seqLen = 0;
  m_documents = 0;
  m_longer = 0;
  m_summary.clear();
  m_longerText.clear();
  endResetModel();
}

QString CorpusModel::longerText() const {
  if (!hasCorpus()) return {};
  return m_longer == 0 ? tr("no document is longer than the sequence") : m_longerText;
}

}  // namespace spplan::gui
