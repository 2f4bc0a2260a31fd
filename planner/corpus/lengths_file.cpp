// Reading a lengths file: bounded, its format told by its content, and the CSV reader; writing
// one (what `spplan lengths` writes).
#include <algorithm>
#include <cctype>
#include <charconv>
#include <filesystem>
#include <fstream>

#include "planner/config/loaders.hpp"
#include "planner/core/parse.hpp"
#include "planner/corpus/lengths_formats.hpp"
#include "planner/corpus/tally.hpp"

namespace spplan::corpus {
namespace {

constexpr std::string_view kUtf8Bom = "\xEF\xBB\xBF";  // Excel's "CSV UTF-8" opens with it

std::string_view trimmed(std::string_view s) {
  const size_t begin = s.find_first_not_of(" \t\r");
  if (begin == std::string_view::npos) return {};
  return s.substr(begin, s.find_last_not_of(" \t\r") - begin + 1);
}

bool equals_ignoring_case(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) return false;
  }
  return true;
}

// "length" or "length,count" (any case, blanks around the comma), the header a spreadsheet or
// pandas' to_csv writes; only the first line that is not blank or a comment may be one.
bool is_header(std::string_view first, std::string_view second, bool has_second) {
  return equals_ignoring_case(first, "length") && (!has_second || equals_ignoring_case(second, "count"));
}

// One line that is not blank or a comment: LENGTH or LENGTH,COUNT (or the header when `first`).
Status read_csv_line(const std::string& where, std::string_view line, bool first, LengthTally* tally) {
  const size_t comma = line.find(',');
  const std::string_view length_text = trimmed(line.substr(0, comma));
  const bool has_count = comma != std::string_view::npos;
  const std::string_view count_text = has_count ? trimmed(line.substr(comma + 1)) : std::string_view{};
  if (first && is_header(length_text, count_text, has_count)) return Status::ok();
  if (count_text.find(',') != std::string_view::npos) {
    return Status::invalid(where + ": value \"" + shown(line) +
                           "\" is not a line of a lengths file (allowed: LENGTH or LENGTH,COUNT)");
  }
  const int64_t length = whole_number(length_text, kMaxDocumentTokens);
  if (length < 0) {
    const std::string header = first ? "; or the header \"length\" or \"length,count\" first" : "";
    return Status::invalid(where + ": value \"" + shown(length_text) + "\" is not a document length (allowed: " +
                           kLengthAllowed + header + ")");
  }
  const int64_t count = has_count ? whole_number(count_text, kMaxDocuments) : 1;
  if (count < 0) {
    return Status::invalid(where + ": value \"" + shown(count_text) + "\" is not a document count (allowed: " +
                           kCountAllowed + ")");
  }
  return tally->add(length, count, where);
}

}  // namespace

int64_t whole_number(std::string_view text, int64_t max) {
  if (text.empty() || text.find_first_not_of("0123456789") != std::string_view::npos) return -1;
  int64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value < 1 || value > max) return -1;
  return value;
}

std::string shown(std::string_view text) {
  constexpr size_t kShown = 40;
  return text.size() <= kShown ? printable(text) : printable(text.substr(0, kShown)) + "...";
}

Status no_documents(const std::string& where) {
  return Status::invalid(where + ": no documents (allowed: one or more document lengths: LENGTH or LENGTH,COUNT "
                                 "lines, or JSON [LENGTH, ...] or {\"LENGTH\": COUNT, ...}; docs/lengths.md)");
}

Result<Corpus> read_lengths_csv(const std::string& where, std::string_view text) {
  LengthTally tally;
  bool first = true;
  int64_t line_number = 0;
  for (size_t begin = 0; begin < text.size();) {
    const size_t end = std::min(text.find('\n', begin), text.size());
    const std::string_view line = trimmed(text.substr(begin, end - begin));
    begin = end + 1;
    ++line_number;
    if (line.empty() || line.front() == '#') continue;
    SPPLAN_RETURN_IF_ERROR(read_csv_line(where + ": line " + std::to_string(line_number), line, first, &tally));
    first = false;
  }
  if (tally.documents() == 0) return no_documents(where);
  return tally.take();
}

Result<Corpus> read_lengths_text(const std::string& where, std::string_view text) {
  if (text.substr(0, kUtf8Bom.size()) == kUtf8Bom) text.remove_prefix(kUtf8Bom.size());
  const size_t first = text.find_first_not_of(" \t\r\n");
  if (first != std::string_view::npos && (text[first] == '[' || text[first] == '{')) return read_lengths_json(where, text);
  return read_lengths_csv(where, text);
}

Result<Corpus> read_lengths_file(const std::string& path) {
  SPPLAN_RETURN_IF_ERROR(check_input_file(path));
  const std::string too_large = path + ": larger than " + std::to_string(kMaxLengthsFileBytes >> 20) +
                                " MiB (allowed: a lengths file up to that size; LENGTH,COUNT lines, as spplan lengths "
                                "writes, hold any corpus in far less)";
  std::error_code error;
  const auto size = std::filesystem::file_size(path, error);
  if (!error && size > static_cast<uintmax_t>(kMaxLengthsFileBytes)) return Status::invalid(too_large);
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::invalid(path + ": cannot be read (allowed: a readable lengths file)");
  std::string text;
  char buffer[1 << 16];
  // Bounded while reading too: the file may grow after its size was asked.
  while (in.read(buffer, sizeof buffer) || in.gcount() > 0) {
    text.append(buffer, static_cast<size_t>(in.gcount()));
    if (static_cast<int64_t>(text.size()) > kMaxLengthsFileBytes) return Status::invalid(too_large);
  }
  return read_lengths_text(path, text);
}

std::string lengths_csv(const Corpus& corpus, const std::string& comment) {
  std::string text = comment.empty() ? "" : "# " + printable(comment) + "\n";
  text += "length,count\n";
  for (const auto& [length, count] : corpus.length_counts) text += std::to_string(length) + "," + std::to_string(count) + "\n";
  return text;
}

}  // namespace spplan::corpus
