// CorpusModel: the corpus's document lengths as a histogram of log-spaced bins (four a doubling of
// the length: a corpus's long tail, 10^4 to 10^6 tokens, gets as many bins as its bulk), with the
// plan's sequence length and what the packing does to the documents longer than it. One row a bin,
// from the shortest document's bin to the longest's (empty bins between them kept: the gaps are
// the tail). Feeds CorpusChartView; numbers are corpus::Corpus's and corpus::pack's.
#pragma once

#include <QAbstractTableModel>
#include <vector>

#include "planner/corpus/corpus.hpp"

namespace spplan::gui {

class CorpusModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  // A bin holds the documents of length low <= L < high (tokens).
  enum Column { LowColumn, HighColumn, DocumentsColumn, TokensColumn, ColumnCount };
  static constexpr int kBinsPerDoubling = 4;
  // Qt::DisplayRole: text ("65,536"); ValueRole: the number, which the chart draws.
  static constexpr int ValueRole = Qt::UserRole;

  explicit CorpusModel(QObject* parent = nullptr);

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

  // The corpus as packed at seq_len (packed: corpus::pack's answer, as the plan holds it).
  void setCorpus(const corpus::Corpus& corpus, corpus::Packing packing, int64_t seq_len, const corpus::PackedCorpus& packed);
  void clear();

  bool hasCorpus() const { return m_seqLen > 0; }
  int64_t seqLen() const { return m_seqLen; }  // 0 without a corpus
  int64_t documents() const { return m_documents; }
  int64_t longerDocuments() const { return m_longer; }  // documents longer than the sequence
  // "11,998 documents, 115,408,568 tokens, longest 76,620; packed bfd into 1,774 sequences of 65536
  // tokens: 0.7% padding": the CLI's corpus line (corpus::packed_text).
  QString summaryText() const { return m_summary; }
  // "5 documents (0.042%) longer than the sequence: cut into pieces, each trained apart", or with
  // packing none "...: cut at the sequence's end, 12,345 tokens not trained" (corpus::longer_text);
  // "no document is longer than the sequence" when none is; empty without a corpus.
  QString longerText() const;

 private:
  struct Bin {
    int64_t low, high;
    int64_t documents = 0;
    double tokens = 0;
  };
  std::vector<Bin> m_bins;
  int64_t m_seqLen = 0;
  int64_t m_documents = 0;
  int64_t m_longer = 0;
  QString m_summary, m_longerText;  // the CLI's words, made when the corpus is set
};

}  // namespace spplan::gui
