#include "planner/config/plan_documents_toml.hpp"

#include <sstream>

#include "planner/config/toml_reader.hpp"

namespace spplan {
namespace {

// Pieces a plan may list: a packing's pieces are each distinct length below 1,024 tokens and at
// most 4,096 bins above (planner/corpus/packing.cpp), so a packed plan lists a few thousand;
// the bound keeps a hand-edited file from growing the costmodel's per-piece walk without end.
constexpr size_t kMaxPieces = size_t{1} << 16;
// Pieces of one length, and sequences: far above a corpus's 2^31 documents cut into pieces.
constexpr int64_t kMaxCount = int64_t{1} << 40;

Status bad_piece(const std::string& where, size_t i, const toml::node& node, int64_t seq_len) {
  return Status::invalid(where + "[" + std::to_string(i) + "]\": value " + describe(node) +
                         " is not allowed (allowed: [length, count], whole numbers, 1 <= length <= seq_len " +
                         std::to_string(seq_len) + ", count >= 1, lengths ascending)");
}

Status read_pieces(const std::string& path, const toml::node* node, int64_t seq_len, DocumentPieces* d) {
  const std::string where = path + ": key \"documents.pieces";
  const toml::array* list = node != nullptr ? node->as_array() : nullptr;
  if (list == nullptr || list->empty() || list->size() > kMaxPieces) {
    return Status::invalid(where + "\": value " + (node ? describe(*node) : std::string("(missing)")) +
                           " is not allowed (allowed: a list of 1 to " + std::to_string(kMaxPieces) +
                           " [length, count] pairs)");
  }
  for (size_t i = 0; i < list->size(); ++i) {
    const toml::array* pair = (*list)[i].as_array();
    const toml::value<int64_t>* length = pair && pair->size() == 2 ? (*pair)[0].as_integer() : nullptr;
    const toml::value<int64_t>* count = pair && pair->size() == 2 ? (*pair)[1].as_integer() : nullptr;
    if (length == nullptr || count == nullptr || length->get() < 1 || length->get() > seq_len || count->get() < 1 ||
        count->get() > kMaxCount || (!d->length_counts.empty() && length->get() <= d->length_counts.back().first)) {
      return bad_piece(where, i, (*list)[i], seq_len);
    }
    d->length_counts.emplace_back(length->get(), count->get());
  }
  return Status::ok();
}

}  // namespace

Status read_documents_table(const std::string& path, const toml::table& root, PlanSpec* plan) {
  const toml::node* node = root.get("documents");
  if (node == nullptr) return Status::ok();
  const toml::table* table = node->as_table();
  if (table == nullptr) {
    return Status::invalid(path + ": key \"documents\": value " + describe(*node) +
                           " is not allowed (allowed: a table with packed, sequences and pieces)");
  }
  KeyReader r(path, *table, "documents.");
  DocumentPieces d;
  bool packed = true;
  SPPLAN_RETURN_IF_ERROR(r.read_bool("packed", &packed, true));
  SPPLAN_RETURN_IF_ERROR(r.read_int("sequences", &d.sequences, true, 1, kMaxCount));
  r.mark_read("pieces");
  SPPLAN_RETURN_IF_ERROR(r.check_no_unknown_keys());
  SPPLAN_RETURN_IF_ERROR(read_pieces(path, table->get("pieces"), plan->seq_len, &d));
  // The pieces fill the sequences: no more tokens than sequences x seq_len, and without packing one
  // piece a sequence.
  const double slots = static_cast<double>(d.sequences) * static_cast<double>(plan->seq_len);
  int64_t pieces = 0;
  for (const auto& [length, count] : d.length_counts) pieces += count;
  if (d.real_tokens() > slots || (!packed && pieces > d.sequences)) {
    return Status::invalid(path + ": key \"documents.sequences\": value " + std::to_string(d.sequences) +
                           " is not allowed (allowed: enough sequences of seq_len " + std::to_string(plan->seq_len) +
                           " for the pieces' " + std::to_string(static_cast<int64_t>(d.real_tokens())) + " tokens" +
                           (packed ? ")" : ", one piece a sequence when not packed)"));
  }
  plan->documents = std::move(d);
  plan->packed_documents = packed;
  return Status::ok();
}

std::string documents_toml(const PlanSpec& plan) {
  if (plan.documents.empty()) return "";
  std::ostringstream o;
  o << "\n# What the sequences hold, as the corpus was packed when this plan was made: attention is priced\n"
       "# per document where the trainer's kernel runs packed documents apart.\n"
    << "[documents]\npacked = " << (plan.packed_documents ? "true" : "false") << "\nsequences = " << plan.documents.sequences
    << "\npieces = [";
  for (size_t i = 0; i < plan.documents.length_counts.size(); ++i) {
    o << (i == 0 ? "" : i % 8 == 0 ? ",\n  " : ", ") << "[" << plan.documents.length_counts[i].first << ", "
      << plan.documents.length_counts[i].second << "]";
  }
  o << "]\n";
  return o.str();
}

}  // namespace spplan
