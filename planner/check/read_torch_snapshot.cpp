// torch.cuda.memory._dump_snapshot's file: pickle.dump of torch.cuda.memory._snapshot()'s dict,
// read from torch 2.15.0 (torch/cuda/memory.py: _snapshot's docstring gives the shape;
// torch/cuda/_memory_viz.py reads it the way this file does). Its keys, as used here:
//   segments: [{device, total_size (cudaMalloc'd), active_size, blocks: [{size, state}]}]
//     (reserved memory is the sum of the segments; a block's state is "active_allocated",
//     "active_awaiting_free" or "inactive")
//   device_traces: one list a device of {action, size}, with _record_memory_history on: "alloc" and
//     "free_completed" move allocated memory (_memory_viz.py's trace counts them so), "segment_alloc"
//     / "segment_free" (and "segment_map" / "segment_unmap" of expandable segments) move reserved.
// torch.cuda.memory.memory_snapshot()'s list of segments, pickled by hand, reads as the same.
#include <algorithm>
#include <map>

#include "planner/check/pickle_value.hpp"
#include "planner/check/readers.hpp"
#include "planner/check/run_log.hpp"

namespace spplan::check {
namespace {

using pickle::Document;
using pickle::Kind;
using pickle::ValueId;

// A plot of a run needs no more; each kept point is the largest of the events it stands for, so the
// series keeps its peak.
constexpr size_t kMaxSamples = 4096;

const char* const kAllowed = "torch.cuda.memory._dump_snapshot's output";

// "an int", "a dict", "None".
std::string a_kind(Kind kind) {
  if (kind == Kind::kNone) return "None";
  return std::string(kind == Kind::kInt ? "an " : "a ") + pickle::kind_name(kind);
}

struct DeviceMemory {
  double reserved_now = 0;   // the segments' total_size at the snapshot
  double allocated_now = 0;  // the active blocks' sizes at the snapshot
  bool has_segments = false;
  std::vector<double> allocated_deltas, reserved_deltas;  // the trace's events, in order
};

class SnapshotReader {
 public:
  SnapshotReader(const std::string& where, const Document& doc) : where_(where), doc_(doc) {}

  Status read_segments(ValueId segments) {
    SPPLAN_RETURN_IF_ERROR(require(segments, Kind::kList, "segments"));
    const std::vector<ValueId>& list = doc_.items(segments);
    for (size_t i = 0; i < list.size(); ++i) SPPLAN_RETURN_IF_ERROR(read_segment(list[i], "segments[" + std::to_string(i) + "]"));
    return Status::ok();
  }

  Status read_traces(ValueId traces) {
    SPPLAN_RETURN_IF_ERROR(require(traces, Kind::kList, "device_traces"));
    const std::vector<ValueId>& devices = doc_.items(traces);
    for (size_t d = 0; d < devices.size(); ++d) {
      const std::string at = "device_traces[" + std::to_string(d) + "]";
      SPPLAN_RETURN_IF_ERROR(require(devices[d], Kind::kList, at));
      const std::vector<ValueId>& entries = doc_.items(devices[d]);
      for (size_t e = 0; e < entries.size(); ++e) {
        SPPLAN_RETURN_IF_ERROR(read_event(static_cast<int64_t>(d), entries[e], at + "[" + std::to_string(e) + "]"));
      }
    }
    return Status::ok();
  }

  const std::map<int64_t, DeviceMemory>& devices() const { return devices_; }

 private:
  Status bad(const std::string& at, const std::string& what) const {
    return Status::invalid(where_ + ": " + at + ": " + what + " (allowed: " + kAllowed + ")");
  }
  Status require(ValueId v, Kind kind, const std::string& at) const {
    if (doc_.kind(v) == kind) return Status::ok();
    return bad(at, a_kind(doc_.kind(v)) + ", not " + a_kind(kind));
  }
  // The non-negative int at `key` of dict `v`; nullopt when absent.
  Result<std::optional<int64_t>> size_at(ValueId v, const char* key, const std::string& at) const {
    const std::optional<ValueId> x = doc_.get(v, key);
    if (!x) return std::optional<int64_t>();
    const std::string where_key = at + ": key \"" + key + "\"";
    SPPLAN_RETURN_IF_ERROR(require(*x, Kind::kInt, where_key));
    if (doc_.int_value(*x) < 0) return bad(where_key, "value " + std::to_string(doc_.int_value(*x)) + " is negative");
    return std::optional<int64_t>(doc_.int_value(*x));
  }
  Result<int64_t> required_size(ValueId v, const char* key, const std::string& at) const {
    SPPLAN_ASSIGN_OR_RETURN(const std::optional<int64_t> x, size_at(v, key, at));
    if (!x) return bad(at, std::string("no key \"") + key + "\"");
    return *x;
  }

  Status read_segment(ValueId segment, const std::string& at) {
    SPPLAN_RETURN_IF_ERROR(require(segment, Kind::kDict, at));
    SPPLAN_ASSIGN_OR_RETURN(const std::optional<int64_t> device, size_at(segment, "device", at));
    SPPLAN_ASSIGN_OR_RETURN(const int64_t total, required_size(segment, "total_size", at));
    DeviceMemory& d = devices_[device.value_or(0)];
    d.has_segments = true;
    d.reserved_now += static_cast<double>(total);
    const std::optional<ValueId> blocks = doc_.get(segment, "blocks");
    if (!blocks) {  // the segment's own count of what its blocks hold
      SPPLAN_ASSIGN_OR_RETURN(const std::optional<int64_t> active, size_at(segment, "active_size", at));
      d.allocated_now += static_cast<double>(active.value_or(0));
      return Status::ok();
    }
    SPPLAN_RETURN_IF_ERROR(require(*blocks, Kind::kList, at + ": key \"blocks\""));
    const std::vector<ValueId>& list = doc_.items(*blocks);
    for (size_t i = 0; i < list.size(); ++i) {
      const std::string block_at = at + ".blocks[" + std::to_string(i) + "]";
      SPPLAN_RETURN_IF_ERROR(require(list[i], Kind::kDict, block_at));
      SPPLAN_ASSIGN_OR_RETURN(const int64_t size, required_size(list[i], "size", block_at));
      const std::optional<ValueId> state = doc_.get(list[i], "state");
      // "active_allocated" and "active_awaiting_free": a tensor's until free_completed.
      if (state && doc_.kind(*state) == Kind::kStr && doc_.text(*state).rfind("active", 0) == 0) {
        d.allocated_now += static_cast<double>(size);
      }
    }
    return Status::ok();
  }

  Status read_event(int64_t device, ValueId entry, const std::string& at) {
    SPPLAN_RETURN_IF_ERROR(require(entry, Kind::kDict, at));
    const std::optional<ValueId> action = doc_.get(entry, "action");
    if (!action) return bad(at, "no key \"action\"");
    SPPLAN_RETURN_IF_ERROR(require(*action, Kind::kStr, at + ": key \"action\""));
    const std::string& a = doc_.text(*action);
    const bool allocated = a == "alloc" || a == "free_completed";
    const bool reserved = a == "segment_alloc" || a == "segment_free" || a == "segment_map" || a == "segment_unmap";
    if (!allocated && !reserved) return Status::ok();  // free_requested, oom, snapshot, annotate move nothing
    SPPLAN_ASSIGN_OR_RETURN(const int64_t size, required_size(entry, "size", at));
    const bool grows = a == "alloc" || a == "segment_alloc" || a == "segment_map";
    const double delta = grows ? static_cast<double>(size) : -static_cast<double>(size);
    DeviceMemory& d = devices_[device];
    (allocated ? d.allocated_deltas : d.reserved_deltas).push_back(delta);
    return Status::ok();
  }

  const std::string& where_;
  const Document& doc_;
  std::map<int64_t, DeviceMemory> devices_;
};

// The memory after each event: the trace is a ring buffer (_record_memory_history's max_entries)
// that ends at the snapshot, so it is anchored there: what was held before its first event is the
// snapshot's memory less the trace's net change (none below zero).
std::vector<double> levels(double now, const std::vector<double>& deltas) {
  double net = 0;
  for (const double d : deltas) net += d;
  std::vector<double> out;
  out.reserve(deltas.size());
  double level = std::max(0.0, now - net);
  for (const double d : deltas) out.push_back(level += d);
  return out;
}

// At most kMaxSamples points, each the largest of a run of consecutive levels.
std::vector<double> downsample(const std::vector<double>& levels) {
  const size_t per = (levels.size() + kMaxSamples - 1) / kMaxSamples;
  if (per <= 1) return levels;
  std::vector<double> out;
  for (size_t i = 0; i < levels.size(); i += per) {
    out.push_back(*std::max_element(levels.begin() + static_cast<std::ptrdiff_t>(i),
                                    levels.begin() + static_cast<std::ptrdiff_t>(std::min(levels.size(), i + per))));
  }
  return out;
}

// One device's measurements: reserved at the snapshot or the trace's most; allocated only from a
// trace (what the snapshot holds at its moment is not the run's peak, which may have passed).
RunMeasurements measure(const DeviceMemory& d) {
  RunMeasurements run;
  run.formats = {"torch-memory-snapshot"};
  if (d.has_segments || !d.reserved_deltas.empty()) {  // else the snapshot says nothing of the pool
    double reserved = d.reserved_now;
    for (const double level : levels(d.reserved_now, d.reserved_deltas)) reserved = std::max(reserved, level);
    run.peak_reserved_bytes = reserved;
  }
  if (!d.allocated_deltas.empty()) {
    const std::vector<double> allocated = levels(d.allocated_now, d.allocated_deltas);
    run.peak_allocated_bytes = std::max(d.allocated_now, *std::max_element(allocated.begin(), allocated.end()));
    run.memory_samples_bytes = downsample(allocated);
    run.memory_samples_of = MemoryMeasure::kAllocated;
  }
  return run;
}

}  // namespace

Result<RunMeasurements> read_torch_snapshot(const std::string& where, std::string_view bytes) {
  if (static_cast<int64_t>(bytes.size()) > kMaxRunLogBytes) {
    return Status::invalid(where + ": larger than " + std::to_string(kMaxRunLogBytes >> 20) + " MiB (allowed: a snapshot up to that size)");
  }
  SPPLAN_ASSIGN_OR_RETURN(const Document doc, pickle::parse_pickle(where, bytes));
  SnapshotReader reader(where, doc);
  const ValueId root = doc.root();
  if (doc.kind(root) == Kind::kList) {
    SPPLAN_RETURN_IF_ERROR(reader.read_segments(root));
  } else {
    const std::optional<ValueId> segments = doc.get(root, "segments");
    if (!segments) {
      return Status::invalid(where + ": a pickle of " + a_kind(doc.kind(root)) +
                             " without key \"segments\", not a memory snapshot (allowed: " + kAllowed + ")");
    }
    SPPLAN_RETURN_IF_ERROR(reader.read_segments(*segments));
    if (const std::optional<ValueId> traces = doc.get(root, "device_traces")) SPPLAN_RETURN_IF_ERROR(reader.read_traces(*traces));
  }
  // The busiest device: the most reserved, then the most allocated; the first of equals.
  std::optional<RunMeasurements> busiest;
  for (const auto& [device, memory] : reader.devices()) {
    RunMeasurements run = measure(memory);
    const auto key = [](const RunMeasurements& r) { return std::pair(r.peak_reserved_bytes.value_or(0), r.peak_allocated_bytes.value_or(0)); };
    if (!busiest || key(run) > key(*busiest)) busiest = std::move(run);
  }
  if (!busiest) {
    return Status::invalid(where + ": a memory snapshot with no segments and no trace events (allowed: a snapshot taken "
                           "while the process holds CUDA memory, e.g. after a training step)");
  }
  return *busiest;
}

}  // namespace spplan::check
