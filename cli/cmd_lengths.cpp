// spplan lengths DATA... --eos-id N [--out FILE] [--json]: the document lengths of token files
// (scripts/tokenize.py's *.u16.bin / *.u32.bin) as a lengths file (docs/lengths.md), which
// `spplan plan --lengths` reads. Stdout holds one thing: the lengths file (without --out or
// --json), or the summary (a line of text with --out, the JSON object with --json).
#include <iostream>

#include "cli/command_table.hpp"
#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "cli/report.hpp"
#include "planner/core/output_file.hpp"
#include "planner/core/parse.hpp"
#include "planner/corpus/corpus.hpp"
#include "planner/corpus/token_documents.hpp"

namespace spplan::cli {
namespace {

constexpr double kQuantiles[] = {0.5, 0.9, 0.99};
constexpr int64_t kMaxTokenId = 0xFFFFFFFF;  // a uint32 id, the widest a token file holds

std::string data_names(const std::vector<std::string>& data) {
  std::vector<std::string> shown;
  for (const std::string& d : data) shown.push_back(printable(d));
  return join(shown);
}

nlohmann::json summary_json(const corpus::Corpus& c, const std::vector<std::string>& data, int64_t eos_id,
                            const std::optional<std::string>& out) {
  nlohmann::json quantiles = nlohmann::json::object();
  for (const double q : kQuantiles) quantiles[format_number(q)] = c.quantile(q);
  return {{"data", data},
          {"eos_id", eos_id},
          {"out", out ? nlohmann::json(*out) : nlohmann::json(nullptr)},
          {"documents", c.documents()},
          {"tokens", static_cast<int64_t>(c.tokens())},  // <= 2^50 (corpus.hpp): exact
          {"longest", c.longest()},
          {"distinct_lengths", c.length_counts.size()},
          {"quantiles", quantiles}};
}

std::string summary_text(const corpus::Corpus& c, const std::string& out) {
  std::string text = "wrote " + out + ": " + count_text(static_cast<double>(c.documents())) + " documents, " +
                     count_text(c.tokens()) + " tokens, longest " + count_text(static_cast<double>(c.longest())) +
                     "; lengths at 0.5 / 0.9 / 0.99 of the documents:";
  for (const double q : kQuantiles) {
    text += ' ';  // appended, not ' ' + ...: GCC 12's -Wrestrict misreads that inlined operator+
    text += count_text(static_cast<double>(c.quantile(q)));
  }
  return text + "\n";
}

}  // namespace

std::vector<FlagSpec> lengths_flag_specs() {
  return {{"eos-id", true,
           "the token id that ends each document, as spplan run --data takes it (scripts/tokenize.py's last line "
           "names it)",
           "a token id from 0 to 4294967295", "required"},
          {"out", true, "write the lengths file here (a # line naming the data, the header length,count, one line a length)",
           "a file path (not one of the DATA files)", "stdout"},
          json_flag_spec()};
}

int cmd_lengths(int argc, const char* const* argv) {
  auto args = Args::parse(argc, argv, 1, lengths_flag_specs());
  if (!args.ok()) return fail(args.status());
  const std::vector<std::string>& data = args->positional();
  if (data.empty()) {
    return fail(Status::invalid("DATA: missing (required: one or more token files, *.u16.bin / *.u32.bin as "
                                "scripts/tokenize.py writes them)"));
  }
  auto eos_text = args->require("eos-id", "the token id that ends each document; scripts/tokenize.py's last line names it");
  if (!eos_text.ok()) return fail(eos_text.status());
  auto eos_id = parse_int("--eos-id", *eos_text, 0, kMaxTokenId);
  if (!eos_id.ok()) return fail(eos_id.status());
  const std::optional<std::string> out = args->get("out");
  if (out) {
    std::vector<NamedPath> inputs;
    for (const std::string& d : data) inputs.push_back({"DATA", d});
    if (Status s = check_not_an_input("--out", *out, inputs); !s) return fail(s);
  }
  auto counted = corpus::count_token_documents(data, *eos_id);
  if (!counted.ok()) return fail(counted.status());
  const corpus::Corpus& c = counted->corpus;
  if (counted->eos_tokens == 0) {
    warn("--eos-id " + std::to_string(*eos_id) + " occurs nowhere in " + data_names(data) + ": counted as one document of " +
         count_text(c.tokens()) + " tokens (is it the data's EOS? scripts/tokenize.py's last line names it)");
  }
  const std::string comment = "document lengths of " + data_names(data) + " (EOS id " + std::to_string(*eos_id) +
                              "), counted by spplan lengths";
  if (out) {
    if (Status s = write_file_atomically(*out, corpus::lengths_csv(c, comment)); !s) return fail(s);
  }
  if (args->has("json")) {
    print_json(summary_json(c, data, *eos_id, out));
  } else if (out) {
    std::cout << summary_text(c, *out);
  } else {
    std::cout << corpus::lengths_csv(c, comment);
  }
  return kExitOk;
}

}  // namespace spplan::cli
