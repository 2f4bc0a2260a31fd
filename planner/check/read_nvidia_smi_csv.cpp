// nvidia-smi --query-gpu=memory.used --format=csv [-l SECONDS]: a header naming each field with its
// unit ("memory.used [MiB]"), then one row per GPU per sample ("40123 MiB"; with ",nounits" the
// bare number). Several fields come comma-separated in the order asked. Read from nvidia-smi's
// --help-query-gpu (driver 550): memory.used is "Total memory allocated by active contexts", so it
// holds the CUDA context and everything the allocator reserved, not only live tensors.
#include <string>

#include "planner/check/readers.hpp"
#include "planner/check/text_scan.hpp"
#include "planner/core/parse.hpp"
#include "planner/core/units.hpp"

namespace spplan::check {
namespace {

std::vector<std::string_view> fields_of(std::string_view line) {
  std::vector<std::string_view> fields;
  for (size_t begin = 0;;) {
    const size_t comma = line.find(',', begin);
    std::string_view f = line.substr(begin, comma == std::string_view::npos ? std::string_view::npos : comma - begin);
    while (!f.empty() && f.front() == ' ') f.remove_prefix(1);
    while (!f.empty() && f.back() == ' ') f.remove_suffix(1);
    fields.push_back(f);
    if (comma == std::string_view::npos) return fields;
    begin = comma + 1;
  }
}

// The column of memory.used in a header row and its unit's bytes; -1 when the row is not a header.
int used_column(std::string_view header, double* unit) {
  const std::vector<std::string_view> fields = fields_of(header);
  for (size_t i = 0; i < fields.size(); ++i) {
    if (fields[i].substr(0, 11) != "memory.used") continue;
    const size_t open = fields[i].find('[');
    *unit = open == std::string_view::npos ? kMiB : unit_bytes(fields[i].substr(open + 1));
    return static_cast<int>(i);
  }
  return -1;
}

}  // namespace

Result<RunMeasurements> read_nvidia_smi_csv(const std::string& where, std::string_view text) {
  RunMeasurements run;
  run.formats = {"nvidia-smi-csv"};
  run.memory_samples_of = MemoryMeasure::kDevice;  // every row a sample (with -l N, one per GPU per N s)
  int column = -1;
  double unit = kMiB;
  const std::vector<std::string_view> lines = text_lines(text);
  for (size_t n = 0; n < lines.size(); ++n) {
    const std::string_view line = lines[n];
    if (line.find_first_not_of(" \t") == std::string_view::npos) continue;
    if (line.find("memory.used") != std::string_view::npos) {  // a header (repeated where logs were joined)
      column = used_column(line, &unit);
      continue;
    }
    const std::string at = where + ": line " + std::to_string(n + 1);
    if (column < 0) return Status::invalid(at + ": a row before the header (allowed: --format=csv with its header)");
    const std::vector<std::string_view> fields = fields_of(line);
    if (static_cast<size_t>(column) >= fields.size()) {
      return Status::invalid(at + ": " + std::to_string(fields.size()) + " fields, memory.used is field " +
                             std::to_string(column + 1) + " (allowed: the header's fields on every row)");
    }
    std::string_view value = fields[static_cast<size_t>(column)];
    const size_t space = value.find(' ');
    const double row_unit = space == std::string_view::npos ? unit : unit_bytes(value.substr(space));
    const auto used = whole_number(value.substr(0, space));
    if (!used || *used < 0) {
      return Status::invalid(at + ": memory.used \"" + printable(std::string(value.substr(0, 40))) +
                             "\" is not a number (allowed: \"40123 MiB\" or 40123)");
    }
    const double bytes = *used * row_unit;
    run.memory_samples_bytes.push_back(bytes);
    if (!run.device_used_bytes || bytes > *run.device_used_bytes) run.device_used_bytes = bytes;
  }
  if (!run.device_used_bytes) return Status::invalid(where + ": a header and no rows (allowed: at least one sample)");
  return run;
}

}  // namespace spplan::check
