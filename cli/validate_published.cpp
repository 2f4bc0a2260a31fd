#include "cli/validate_published.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <string_view>

#include "planner/config/loaders.hpp"
#include "planner/config/plan_rules.hpp"
#include "planner/config/trainer_rules.hpp"
#include "planner/core/parse.hpp"
#include "planner/core/units.hpp"
#include "planner/costmodel/estimate.hpp"
#include "planner/costmodel/memory.hpp"
#include "planner/corpus/corpus.hpp"
#include "planner/search/search.hpp"

namespace spplan::cli {
namespace {

using Row = std::map<std::string, std::string>;

const std::vector<std::string> kColumns{"id", "model", "gpu", "num_gpus", "sp", "zero", "offload_optimizer",
                                        "offload_params", "act_ckpt", "tiled_mlp", "tiled_loss", "seq_len",
                                        "micro_batch", "peak_mem_gb", "fits", "tokens_per_s", "tflops_per_gpu",
                                        "iter_time_s", "reference"};

// Optional columns, read when present: the software the row ran (`trainer`, default arctic; its
// `attention` kernel, default the trainer's), `precision` (default bf16), `note` (why a row is read
// as it is), and `throughput` ("inconsistent": the source's throughput contradicts itself; shown,
// not counted against the target), `memory` (what peak_mem_gb measures: "allocated", the torch
// peak, or "device", what nvidia-smi shows; default "device" when the reference says nvidia-smi,
// else "allocated"); `cp` and `cp_comm`, the ring's degree and how it moves K/V (default 1 and the
// trainer's variant, the ring where it runs it: GPUs = dp x sp x cp); `not_expressed`, why no
// trainer spplan knows runs what the row ran (another stack, LoRA, an attention-only benchmark):
// such a row is listed with its reason and not predicted; `lengths`, the lengths file of the corpus
// the run packed into its sequences (a path from the CSV's folder; docs/lengths.md), and its
// `packing` (default bfd): attention is then priced per document, as the run computed it.
const std::vector<std::string> kOptionalColumns{"trainer", "attention", "precision", "note",    "throughput",   "memory",
                                                "cp",      "cp_comm",   "lengths",   "packing", "not_expressed"};

// The cell of an optional column, or "" when the file has no such column.
std::string optional_cell(const Row& r, const std::string& key) {
  const auto it = r.find(key);
  return it == r.end() ? std::string() : it->second;
}

// "file.csv:3: column \"sp\"": where a cell's value came from.
std::string column(const std::string& where, const std::string& key) { return where + ": column \"" + key + "\""; }

// The row's corpus packed at its seq_len into p->documents: nothing when the row names no lengths
// file. The file's path is taken from the CSV's folder, so that the validation reads the same
// corpus wherever it runs from. Returns what the packing left, for the row's report.
Result<std::optional<corpus::PackedCorpus>> pack_row_corpus(const std::string& csv_path, const std::string& where,
                                                           const Row& r, PlanSpec* p) {
  const std::string lengths = optional_cell(r, "lengths"), packing = optional_cell(r, "packing");
  if (lengths.empty()) {
    if (!packing.empty()) {
      return Status::invalid(column(where, "packing") + ": value \"" + packing +
                             "\" needs a corpus (allowed: with a lengths file in column \"lengths\")");
    }
    return std::optional<corpus::PackedCorpus>();
  }
  corpus::Packing how = corpus::Packing::kBfd;
  if (!packing.empty()) {
    SPPLAN_ASSIGN_OR_RETURN(how, corpus::parse_packing(column(where, "packing"), packing));
  }
  const std::string file = (std::filesystem::path(csv_path).parent_path() / lengths).string();
  auto c = corpus::read_lengths_file(file);
  if (!c.ok()) return c.status().with_context(column(where, "lengths"));
  corpus::PackedCorpus packed = corpus::pack(*c, p->seq_len, how);
  p->documents = packed.pieces;
  p->packed_documents = how != corpus::Packing::kNone;
  return std::optional<corpus::PackedCorpus>(std::move(packed));
}

// The row's report of its corpus: the file, the packing and what it made of the documents.
nlohmann::json corpus_json(const Row& r, const PlanSpec& p, const corpus::PackedCorpus& packed) {
  const double slots = static_cast<double>(packed.pieces.sequences) * static_cast<double>(p.seq_len);
  const std::string packing = optional_cell(r, "packing");
  return {{"lengths", optional_cell(r, "lengths")},
          {"packing", packing.empty() ? "bfd" : packing},
          {"sequences", packed.pieces.sequences},
          {"real_tokens", packed.pieces.real_tokens()},
          {"padding_pct", slots > 0 ? 100.0 * packed.padding_tokens / slots : 0.0}};
}

// The row's plan; *packed, what its corpus's packing left (empty without a lengths file).
Result<PlanSpec> plan_of(const std::string& csv_path, const std::string& where, const Row& r,
                         std::optional<corpus::PackedCorpus>* packed) {
  PlanSpec p;
  auto col = [&](const char* key) { return column(where, key); };
  auto model = load_model(r.at("model"), "");
  if (!model.ok()) return model.status().with_context(col("model"));
  p.model = *model;
  auto gpu = load_gpu(r.at("gpu"), "");
  if (!gpu.ok()) return gpu.status().with_context(col("gpu"));
  p.cluster.gpu = *gpu;
  SPPLAN_ASSIGN_OR_RETURN(p.cluster.num_gpus, parse_int(col("num_gpus"), r.at("num_gpus"), 1, kMaxGpus));
  SPPLAN_ASSIGN_OR_RETURN(p.knobs.sp, parse_int(col("sp"), r.at("sp"), 1, 1 << 20));
  SPPLAN_ASSIGN_OR_RETURN(p.knobs.zero_stage, parse_int(col("zero"), r.at("zero"), 0, 3));
  SPPLAN_ASSIGN_OR_RETURN(const size_t opt, parse_choice(col("offload_optimizer"), r.at("offload_optimizer"), offload_device_names()));
  SPPLAN_ASSIGN_OR_RETURN(const size_t par, parse_choice(col("offload_params"), r.at("offload_params"), offload_device_names()));
  SPPLAN_ASSIGN_OR_RETURN(const size_t ckpt, parse_choice(col("act_ckpt"), r.at("act_ckpt"), act_ckpt_names()));
  SPPLAN_ASSIGN_OR_RETURN(const size_t mlp, parse_choice(col("tiled_mlp"), r.at("tiled_mlp"), {"no", "yes"}));
  SPPLAN_ASSIGN_OR_RETURN(const size_t loss, parse_choice(col("tiled_loss"), r.at("tiled_loss"), {"no", "yes"}));
  SPPLAN_ASSIGN_OR_RETURN(p.seq_len, parse_seq_len(col("seq_len"), r.at("seq_len")));
  SPPLAN_ASSIGN_OR_RETURN(p.knobs.micro_batch, parse_int(col("micro_batch"), r.at("micro_batch"), 1, 1 << 20));
  if (const std::string cp = optional_cell(r, "cp"); !cp.empty()) {
    SPPLAN_ASSIGN_OR_RETURN(p.knobs.cp, parse_int(col("cp"), cp, 1, 1 << 20));
  }
  if (const std::string comm = optional_cell(r, "cp_comm"); !comm.empty()) {
    SPPLAN_ASSIGN_OR_RETURN(const size_t index, parse_choice(col("cp_comm"), comm, cp_comm_names()));
    p.knobs.cp_comm = static_cast<CpComm>(index);
  }
  p.knobs.offload_optimizer = static_cast<OffloadDevice>(opt);
  p.knobs.offload_params = static_cast<OffloadDevice>(par);
  p.knobs.act_ckpt = static_cast<ActCkpt>(ckpt);
  p.knobs.tiled_mlp = mlp == 1;
  p.knobs.tiled_loss = loss == 1;
  // Both sources ran bf16 Ulysses communication (HF blog example config; ALST recipes).
  p.knobs.sp_comm_dtype = CommDtype::kBf16;
  if (const std::string trainer = optional_cell(r, "trainer"); !trainer.empty()) {
    SPPLAN_ASSIGN_OR_RETURN(p.stack, load_trainer(trainer, col("trainer")));
  }
  if (const std::string attention = optional_cell(r, "attention"); !attention.empty()) {
    SPPLAN_ASSIGN_OR_RETURN(const size_t index, parse_choice(col("attention"), attention, attention_kernel_names()));
    p.stack.attention = static_cast<AttentionKernel>(index);
  }
  if (const std::string precision = optional_cell(r, "precision"); !precision.empty()) {
    SPPLAN_ASSIGN_OR_RETURN(const size_t index, parse_choice(col("precision"), precision, precision_names()));
    p.knobs.precision = static_cast<Precision>(index);
  }
  // Unnamed, the ring variant is the trainer's (axolotl's ring is an all-gather), as the search's.
  if (optional_cell(r, "cp_comm").empty()) p.knobs.cp_comm = searched_cp_comm(p);
  // Before the rules, which refuse a kernel that cannot run packed documents apart.
  SPPLAN_ASSIGN_OR_RETURN(*packed, pack_row_corpus(csv_path, where, r, &p));
  // The kernel first: the trainer's rules read it (a ring on hf runs SDPA only).
  SPPLAN_RETURN_IF_ERROR(settle_attention(&p, !optional_cell(r, "attention").empty(),
                                          [&](const std::string& key) { return col(key.c_str()); }));
  SPPLAN_RETURN_IF_ERROR(check_plan(p, [&](const std::string& key) { return col(key.c_str()); }));
  return p;
}

// What the publication reported for one row.
struct Published {
  bool fits = false;
  std::optional<double> peak_mem_gb, tokens_per_s, tflops_per_gpu;
  std::optional<double> iter_time_s;  // the delta when neither tokens_per_s nor tflops_per_gpu is given
  bool throughput_consistent = true;
  bool device_memory = false;  // peak_mem_gb is what nvidia-smi shows, not torch's allocated peak
};

// A measurement: empty when the source did not report it, else a number > 0 (the deltas divide
// by it).
Result<std::optional<double>> measured(const std::string& where, const Row& r, const char* key) {
  const std::string& text = r.at(key);
  if (text.empty()) return std::optional<double>();
  const auto value = parse_double(column(where, key), text, 0.0);
  if (!value.ok() || *value <= 0) {
    return Status::invalid(column(where, key) + ": value \"" + text +
                           "\" is not allowed (allowed: a number > 0, or empty when not published)");
  }
  return std::optional<double>(*value);
}

Result<Published> published_of(const std::string& where, const Row& r) {
  Published p;
  SPPLAN_ASSIGN_OR_RETURN(const size_t fits, parse_choice(column(where, "fits"), r.at("fits"), {"oom", "yes"}));
  p.fits = fits == 1;
  SPPLAN_ASSIGN_OR_RETURN(p.peak_mem_gb, measured(where, r, "peak_mem_gb"));
  SPPLAN_ASSIGN_OR_RETURN(p.tokens_per_s, measured(where, r, "tokens_per_s"));
  SPPLAN_ASSIGN_OR_RETURN(p.tflops_per_gpu, measured(where, r, "tflops_per_gpu"));
  SPPLAN_ASSIGN_OR_RETURN(p.iter_time_s, measured(where, r, "iter_time_s"));
  p.device_memory = r.at("reference").find("nvidia-smi") != std::string::npos;
  if (const std::string kind = optional_cell(r, "memory"); !kind.empty()) {
    SPPLAN_ASSIGN_OR_RETURN(const size_t index, parse_choice(column(where, "memory"), kind, {"allocated", "device"}));
    p.device_memory = index == 1;
  }
  if (const std::string check = optional_cell(r, "throughput"); !check.empty()) {
    SPPLAN_ASSIGN_OR_RETURN(const size_t index, parse_choice(column(where, "throughput"), check, {"consistent", "inconsistent"}));
    p.throughput_consistent = index == 0;
  }
  return p;
}

// The header's column names; each required column once.
Result<std::vector<std::string>> read_header(const std::string& path, const std::string& line) {
  const std::vector<std::string> header = split_csv_line(line);
  for (const auto& c : kColumns) {
    const auto count = std::count(header.begin(), header.end(), c);
    if (count == 0) {
      return Status::invalid(path + ": column \"" + c + "\": missing (required columns: " + join(kColumns) + ")");
    }
    if (count > 1) return Status::invalid(path + ": column \"" + c + "\": given twice (allowed: once)");
  }
  for (const auto& c : kOptionalColumns) {
    if (std::count(header.begin(), header.end(), c) > 1) {
      return Status::invalid(path + ": column \"" + c + "\": given twice (allowed: once)");
    }
  }
  return header;
}

// One data line as column -> cell.
Result<Row> read_row(const std::string& where, const std::vector<std::string>& header, const std::string& line) {
  bool unclosed_quote = false;
  const auto cells = split_csv_line(line, &unclosed_quote);
  if (unclosed_quote) {
    return Status::invalid(where + ": a quote is not closed (allowed: quoted cells that end on their own line)");
  }
  if (cells.size() != header.size()) {
    return Status::invalid(where + ": " + std::to_string(cells.size()) + " columns, expected " +
                           std::to_string(header.size()));
  }
  Row r;
  for (size_t i = 0; i < header.size(); ++i) r[header[i]] = cells[i];
  return r;
}

double pct(double predicted, double published) { return 100.0 * (predicted - published) / published; }

// ALST's TFLOPS (ArcticTraining metrics.py): per sequence 8*Psi*s + 16*L*h*s^2 (forward, 2x
// backward and one recompute, no causal halving), divided by GPUs x iteration time.
double alst_tflops_per_gpu(const PlanSpec& p, double step_time_s) {
  const double psi = costmodel::param_counts(p.model).total, s = static_cast<double>(p.seq_len);
  const double per_sequence = 8 * psi * s + 16.0 * p.model.num_hidden_layers * p.model.hidden_size * s * s;
  return p.dp() * p.knobs.micro_batch * per_sequence / (p.cluster.num_gpus * step_time_s) / kTera;
}

struct Stats {
  double sum = 0, max = 0;
  int count = 0;
  void add(double v) { sum += std::fabs(v), max = std::max(max, std::fabs(v)), ++count; }
  nlohmann::json json() const { return {{"count", count}, {"mean_abs", count ? sum / count : 0.0}, {"max_abs", max}}; }
};

// The throughput cells of one row: tokens/s, else ALST's TFLOPS, else the step time (its delta
// signed as time: positive is predicted slower). A row whose source contradicts itself is shown
// marked "~" and not counted (`tput` null); step-time rows also go to `step`.
std::string throughput_cells(const PlanSpec& p, const costmodel::Estimate& e, const Published& pub, nlohmann::json* row,
                             Stats* tput, Stats* step, int* misses) {
  char buf[64];
  double d = 0;
  if (const auto& t = pub.tokens_per_s) {
    d = pct(e.tokens_per_s, *t);
    (*row)["tokens_per_s"] = {{"predicted", e.tokens_per_s}, {"published", *t}, {"delta_pct", d}};
    std::snprintf(buf, sizeof buf, "%9.0f %9.0f %+6.1f", e.tokens_per_s, *t, d);
  } else if (const auto& f = pub.tflops_per_gpu) {
    const double predicted = alst_tflops_per_gpu(p, e.time.step_time_s);
    d = pct(predicted, *f);
    (*row)["tflops_per_gpu"] = {{"predicted", predicted}, {"published", *f}, {"delta_pct", d},
                                {"predicted_iter_time_s", e.time.step_time_s}};
    std::snprintf(buf, sizeof buf, "%8.1fT %8.1fT %+6.1f", predicted, *f, d);
  } else if (const auto& t = pub.iter_time_s) {
    d = pct(e.time.step_time_s, *t);
    (*row)["step_time_s"] = {{"predicted", e.time.step_time_s}, {"published", *t}, {"delta_pct", d}};
    std::snprintf(buf, sizeof buf, "%8.3fs %8.3fs %+6.1f", e.time.step_time_s, *t, d);
    if (step != nullptr && tput != nullptr) step->add(d);
  } else {
    return "        -         -      - ";
  }
  if (tput == nullptr) {
    (*row)["throughput_consistent"] = false;
    return std::string(buf) + "~";
  }
  tput->add(d);
  *misses += std::fabs(d) > kThroughputTargetPct;
  return std::string(buf) + " ";
}

}  // namespace

std::vector<std::string> split_csv_line(const std::string& line, bool* unclosed_quote) {
  std::vector<std::string> out(1);
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted && c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
      out.back() += '"';
      ++i;
    } else if (c == '"') {
      quoted = !quoted;
    } else if (c == ',' && !quoted) {
      out.emplace_back();
    } else if (c != '\r') {
      out.back() += c;
    }
  }
  if (unclosed_quote != nullptr) *unclosed_quote = quoted;
  return out;
}

Result<ValidationReport> validate_published(const std::string& path) {
  SPPLAN_RETURN_IF_ERROR(check_input_file(path));  // a device or a pipe would never end
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  // Spreadsheets save "CSV UTF-8" with a byte-order mark (EF BB BF) first: it is no part of the
  // first column's name, which read with it was "\xef\xbb\xbfid" and the id column missing.
  constexpr std::string_view kUtf8Bom = "\xef\xbb\xbf";
  if (line.compare(0, kUtf8Bom.size(), kUtf8Bom) == 0) line.erase(0, kUtf8Bom.size());
  SPPLAN_ASSIGN_OR_RETURN(const std::vector<std::string> header, read_header(path, line));
  ValidationReport rep;
  Stats mem, tput, step, seq;
  int inconsistent = 0;
  int verdicts = 0, verdict_misses = 0;
  nlohmann::json not_expressed = nlohmann::json::array();
  std::string not_expressed_lines;
  char buf[512];
  std::snprintf(buf, sizeof buf, "%-4s %-13s %-7s %4s %5s %9s | %-9s | %7s %7s %6s | %9s %9s %6s  | %7s\n", "id",
                "model", "trainer", "gpus", "sp", "seq", "fits p/m", "mem p", "mem m", "d%", "tput p", "tput m", "d%",
                "maxseq");
  rep.table += buf;
  for (int line_no = 2; std::getline(in, line); ++line_no) {
    if (line.empty() || line == "\r") continue;
    const std::string where = path + ":" + std::to_string(line_no);
    SPPLAN_ASSIGN_OR_RETURN(Row r, read_row(where, header, line));
    if (const std::string why = optional_cell(r, "not_expressed"); !why.empty()) {
      not_expressed.push_back({{"id", r["id"]}, {"model", r["model"]}, {"gpu", r["gpu"]}, {"why", why}});
      not_expressed_lines += r["id"] + " " + r["model"] + ": " + why + "\n";
      continue;
    }
    std::optional<corpus::PackedCorpus> packed;
    SPPLAN_ASSIGN_OR_RETURN(const PlanSpec p, plan_of(path, where, r, &packed));
    SPPLAN_ASSIGN_OR_RETURN(const Published published, published_of(where, r));
    inconsistent += published.throughput_consistent ? 0 : 1;
    const costmodel::Estimate e = costmodel::estimate(p);
    // gpu and num_gpus let a reader (the GUI's accuracy column) group the rows by accelerator.
    nlohmann::json row{{"id", r["id"]},
                       {"model", r["model"]},
                       {"gpu", r["gpu"]},
                       {"num_gpus", p.cluster.num_gpus},
                       {"trainer", p.stack.trainer},
                       {"seq_len", p.seq_len},
                       {"predicted_fits", e.fits},
                       {"note", optional_cell(r, "note")}};
    if (packed) row["corpus"] = corpus_json(r, p, *packed);

    const bool published_fits = published.fits;
    ++verdicts;
    const bool verdict_ok = e.fits == published_fits;
    verdict_misses += verdict_ok ? 0 : 1;
    row["published_fits"] = published_fits;
    row["fits_ok"] = verdict_ok;
    // Published peaks are the training script's torch peak in GiB (labelled GB): allocated memory,
    // which does not include the CUDA context, NCCL buffers or allocator slack; or, where the
    // source says so, the device's use as nvidia-smi shows it, which does.
    const double mem_pred_gib =
        (e.memory.total_bytes() - (published.device_memory ? 0.0 : e.memory.overhead_bytes)) / kGiB;
    std::string mem_cells = "      -       -      -";
    if (const auto& m = published.peak_mem_gb; m && published_fits) {
      const double d = pct(mem_pred_gib, *m);
      mem.add(d);
      rep.misses += std::fabs(d) > kMemoryTargetPct;
      row["memory"] = {{"predicted_gib", mem_pred_gib}, {"published", *m}, {"delta_pct", d}};
      std::snprintf(buf, sizeof buf, "%7.1f %7.1f %+6.1f", mem_pred_gib, *m, d);
      mem_cells = buf;
    }
    const std::string tput_cells = throughput_cells(p, e, published, &row, published.throughput_consistent ? &tput : nullptr,
                                                    published.iter_time_s ? &step : nullptr, &rep.misses);
    std::string seq_cell = "      -";
    if (r["reference"].find("ALST") != std::string::npos && published_fits) {
      // ALST rows are each the longest sequence that ran with those features (validation/README.md).
      const double ratio = static_cast<double>(search::max_seq_fixed(p, 1024)) / p.seq_len;
      seq.add(ratio);
      rep.misses += ratio < kMaxSeqLowRatio || ratio > kMaxSeqHighRatio;
      row["max_seq_ratio"] = ratio;
      std::snprintf(buf, sizeof buf, "%7.2f", ratio);
      seq_cell = buf;
    }
    // "8", or "2x4" for sp 2 x cp 4.
    const std::string layout = std::to_string(p.knobs.sp) + (p.knobs.cp > 1 ? "x" + std::to_string(p.knobs.cp) : "");
    std::snprintf(buf, sizeof buf, "%-4s %-13s %-7s %4lld %5s %9lld | %3s/%-3s%s | %s | %s| %s\n", r["id"].c_str(),
                  r["model"].c_str(), p.stack.trainer.c_str(), static_cast<long long>(p.cluster.num_gpus),
                  layout.c_str(), static_cast<long long>(p.seq_len), e.fits ? "yes" : "oom", published_fits ? "yes" : "oom",
                  verdict_ok ? " " : "!", mem_cells.c_str(), tput_cells.c_str(), seq_cell.c_str());
    rep.table += buf;
    row["cp"] = p.knobs.cp;
    rep.rows.push_back(row);
  }
  if (verdicts == 0 && not_expressed.empty()) {  // a report of zero rows would read as "no target missed"
    return Status::invalid(path + ": no data rows after the header (allowed: a header and at least one row)");
  }
  rep.misses += verdict_misses;
  rep.summary = {{"fit_verdicts", verdicts},
                 {"fit_verdict_misses", verdict_misses},
                 {"memory_pct", mem.json()},
                 {"throughput_pct", tput.json()},
                 {"step_time_pct", step.json()},
                 {"throughput_inconsistent_rows", inconsistent},
                 {"max_seq_ratio_max_deviation", seq.count ? seq.max : 0.0},
                 {"targets_missed", rep.misses},
                 {"not_expressed", not_expressed}};
  std::snprintf(buf, sizeof buf,
                "fit verdicts: %d of %d right\nmemory: mean |delta| %.1f%%, max %.1f%% (target %.0f%%)\n"
                "throughput: mean |delta| %.1f%%, max %.1f%% (target %.0f%%; %d rows marked ~ inconsistent, not counted)\n",
                verdicts - verdict_misses, verdicts, mem.count ? mem.sum / mem.count : 0.0, mem.max, kMemoryTargetPct,
                tput.count ? tput.sum / tput.count : 0.0, tput.max, kThroughputTargetPct, inconsistent);
  rep.table += buf;
  if (step.count > 0) {
    std::snprintf(buf, sizeof buf, "step time (of those): mean |delta| %.1f%%, max %.1f%% over %d rows\n",
                  step.sum / step.count, step.max, step.count);
    rep.table += buf;
  }
  std::snprintf(buf, sizeof buf, "targets missed: %d\n", rep.misses);
  rep.table += buf;
  if (!not_expressed.empty()) {
    rep.table += std::to_string(not_expressed.size()) + " rows not expressed by any trainer (not predicted):\n" +
                 not_expressed_lines;
  }
  return rep;
}

}  // namespace spplan::cli
