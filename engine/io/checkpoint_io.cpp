#include "engine/io/checkpoint_io.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <algorithm>
#include <functional>
#include <utility>

#include <nlohmann/json.hpp>

#include "engine/io/fault_point.hpp"
#include "planner/config/loaders.hpp"
#include "planner/core/output_file.hpp"
#include "planner/core/path_info.hpp"

namespace spplan::engine {
namespace fs = std::filesystem;
namespace {

constexpr const char* kFormat = "spplan-engine-checkpoint-1";

std::string hex64(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof(buf), "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

Status io_error(const std::string& path, const std::string& what, int error = errno) {
  return Status::io_error("--save: " + path + ": " + what + " (" + std::strerror(error) + ")");
}

Status write_fsync(const std::string& path, const void* data, size_t bytes) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) return io_error(path, "cannot create");
  const char* p = static_cast<const char*>(data);
  for (size_t done = 0; done < bytes;) {
    const ssize_t n = ::write(fd, p + done, bytes - done);
    if (n <= 0) {  // ENOSPC on a full disk, EFBIG past a file size limit
      const int error = n < 0 ? errno : ENOSPC;
      ::close(fd);
      return io_error(path, "write failed", error);
    }
    done += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0) {  // a full disk may only show here (delayed allocation)
    const int error = errno;
    ::close(fd);
    return io_error(path, "fsync failed", error);
  }
  return ::close(fd) == 0 ? Status::ok() : io_error(path, "close failed");
}

void fsync_dir(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY);
  if (fd >= 0) { ::fsync(fd); ::close(fd); }
}

nlohmann::json settings_json(const TrainingSettings& t);

std::string manifest_text(const CheckpointMeta& meta, const std::vector<BlobRef>& blobs) {
  nlohmann::json files = nlohmann::json::array();
  for (const auto& b : blobs) {
    files.push_back({{"name", b.name}, {"bytes", b.bytes}, {"fnv1a64", hex64(fnv1a64(b.data, b.bytes))}});
  }
  nlohmann::json j{{"format", kFormat}, {"step", meta.step}, {"next_sequence", meta.next_sequence},
                   {"seed", meta.seed}, {"model", meta.model}, {"run", meta.run}, {"files", files}};
  if (meta.data) j["data"] = *meta.data;
  if (meta.eos_id) j["eos_id"] = *meta.eos_id;
  if (meta.settings) j["settings"] = settings_json(*meta.settings);
  return j.dump(2) + "\n";
}

std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

Status bad(const std::string& what) { return Status::invalid("--resume: " + what); }

// A whole number >= 0 the manifest holds, or nothing: checked before converting, since
// nlohmann's get<int64_t>() of a float such as 1e28 is an undefined float-to-integer cast.
std::optional<uint64_t> whole(const nlohmann::json& j, const char* key, uint64_t max) {
  if (!j.contains(key) || !j[key].is_number_unsigned() || j[key].get<uint64_t>() > max) return std::nullopt;
  return j[key].get<uint64_t>();
}

nlohmann::json settings_json(const TrainingSettings& t) {
  const OptimizerSpec& o = t.optimizer;
  return {{"lr", o.lr},
          {"warmup_steps", o.warmup_steps},
          {"lr_schedule", to_string(o.lr_schedule)},
          {"min_lr", o.min_lr},
          {"weight_decay", o.weight_decay},
          {"grad_clip", o.grad_clip},
          {"train_steps", o.train_steps},
          {"schedule_steps", t.schedule_steps},
          {"adam_beta1", o.adam_beta1},
          {"adam_beta2", o.adam_beta2},
          {"adam_eps", o.adam_eps},
          {"weight_decay_all", t.weight_decay_all},
          {"seq_len", t.seq_len},
          {"next_token", t.next_token}};
}

// The settings object, every key checked for its type and range (a hand-edited or damaged
// manifest is one line, never an exception or a cast of a float to an integer).
Result<TrainingSettings> parse_settings(const std::string& path, const nlohmann::json& j) {
  const auto bad_key = [&](const char* key) {
    return Status::invalid("--resume: " + path + ": key \"settings." + key +
                           "\": missing or of the wrong type (the checkpoint is corrupted)");
  };
  if (!j.is_object()) return bad_key("");
  TrainingSettings t;
  OptimizerSpec& o = t.optimizer;
  const struct {
    const char* key;
    double* value;
  } reals[] = {{"lr", &o.lr},           {"min_lr", &o.min_lr},         {"weight_decay", &o.weight_decay},
               {"grad_clip", &o.grad_clip}, {"adam_beta1", &o.adam_beta1}, {"adam_beta2", &o.adam_beta2},
               {"adam_eps", &o.adam_eps}};
  for (const auto& r : reals) {
    if (!j.contains(r.key) || !j[r.key].is_number() || !std::isfinite(j[r.key].get<double>())) return bad_key(r.key);
    *r.value = j[r.key].get<double>();
  }
  constexpr uint64_t kMaxCount = uint64_t{1} << 62;
  const struct {
    const char* key;
    int64_t* value;
  } counts[] = {{"warmup_steps", &o.warmup_steps}, {"train_steps", &o.train_steps},
                {"schedule_steps", &t.schedule_steps}, {"seq_len", &t.seq_len}, {"next_token", &t.next_token}};
  for (const auto& c : counts) {
    const auto v = whole(j, c.key, kMaxCount);
    if (!v) return bad_key(c.key);
    *c.value = static_cast<int64_t>(*v);
  }
  const auto& names = lr_schedule_names();
  const auto schedule = j.contains("lr_schedule") && j["lr_schedule"].is_string()
                            ? std::find(names.begin(), names.end(), j["lr_schedule"].get<std::string>())
                            : names.end();
  if (schedule == names.end()) return bad_key("lr_schedule");
  o.lr_schedule = static_cast<LrSchedule>(schedule - names.begin());
  if (!j.contains("weight_decay_all") || !j["weight_decay_all"].is_boolean()) return bad_key("weight_decay_all");
  t.weight_decay_all = j["weight_decay_all"].get<bool>();
  return t;
}

Result<CheckpointMeta> parse_manifest(const std::string& path, const nlohmann::json& j) {
  if (!j.is_object() || j.value("format", "") != kFormat || !j.contains("files") || !j["files"].is_array()) {
    return bad(path + ": not a spplan-engine checkpoint manifest (allowed: a folder written by --save)");
  }
  constexpr uint64_t kMaxCount = uint64_t{1} << 62;  // steps and sequences: far beyond any run
  const auto step = whole(j, "step", kMaxCount), next = whole(j, "next_sequence", kMaxCount);
  const auto seed = whole(j, "seed", UINT64_MAX);
  const bool strings = j.contains("model") && j["model"].is_string() && (!j.contains("run") || j["run"].is_string());
  if (!step || !next || !seed || !strings) {
    return bad(path + ": manifest is missing step, next_sequence, seed or model (the checkpoint is corrupted)");
  }
  CheckpointMeta m;
  m.step = static_cast<int64_t>(*step);
  m.next_sequence = static_cast<int64_t>(*next);
  m.seed = *seed;
  m.model = j["model"].get<std::string>();
  m.run = j.value("run", "");
  if (j.contains("data") && j["data"].is_string()) m.data = j["data"].get<std::string>();
  if (j.contains("eos_id") && j["eos_id"].is_number_integer()) m.eos_id = j["eos_id"].get<int64_t>();
  if (j.contains("settings")) {
    SPPLAN_ASSIGN_OR_RETURN(m.settings, parse_settings(path, j["settings"]));
  }
  return m;
}

Status read_blob(const std::string& folder, const nlohmann::json& f, LoadedCheckpoint* out) {
  if (!f.is_object() || !f.contains("name") || !f.contains("bytes") || !f.contains("fnv1a64")) {
    return bad(folder + "/manifest.json: a files entry lacks name, bytes or fnv1a64 (the checkpoint is corrupted)");
  }
  const std::string name = f["name"].get<std::string>();
  const std::string path = folder + "/" + name;
  if (name.find('/') != std::string::npos || look_at(path).kind != PathKind::kFile) {
    return bad(path + ": missing (the checkpoint is incomplete)");
  }
  std::string bytes = read_all(path);
  const auto expected = whole(f, "bytes", UINT64_MAX);
  if (!expected || bytes.size() != *expected) {
    return bad(path + ": size " + std::to_string(bytes.size()) + " bytes, the manifest says " +
               (expected ? std::to_string(*expected) : std::string("no whole number")) + " (the checkpoint is corrupted)");
  }
  const std::string sum = hex64(fnv1a64(bytes.data(), bytes.size()));
  if (sum != f["fnv1a64"].get<std::string>()) {
    return bad(path + ": checksum fnv1a64 " + sum + " does not match the manifest's " + f["fnv1a64"].get<std::string>() +
               " (the checkpoint is corrupted)");
  }
  out->blobs[name] = std::move(bytes);
  return Status::ok();
}

std::string folder_name(int64_t step) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "ckpt-%06lld", static_cast<long long>(step));
  return buf;
}

// The step in a "ckpt-NNNNNN" folder name, or -1 for any other name.
int64_t step_of(const std::string& name) {
  if (name.rfind("ckpt-", 0) != 0 || name.size() == 5) return -1;
  int64_t step = 0;
  for (size_t i = 5; i < name.size(); ++i) {
    if (name[i] < '0' || name[i] > '9' || step > (int64_t{1} << 50)) return -1;
    step = step * 10 + (name[i] - '0');
  }
  return step;
}

// The ckpt-* folders of a --save folder, newest (highest step) first.
std::vector<std::pair<int64_t, std::string>> checkpoints_newest_first(const std::string& dir) {
  std::vector<std::pair<int64_t, std::string>> found;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (const int64_t step = step_of(name); step >= 0 && entry.is_directory(ec)) found.emplace_back(step, name);
  }
  std::sort(found.begin(), found.end(), std::greater<>());
  return found;
}

// Reads and verifies one ckpt-* folder.
Result<LoadedCheckpoint> load_folder(const std::string& folder) {
  LoadedCheckpoint out;
  out.folder = folder;
  const std::string mpath = folder + "/manifest.json";
  if (look_at(mpath).kind != PathKind::kFile) return bad(mpath + ": missing (the checkpoint is incomplete)");
  const nlohmann::json j = nlohmann::json::parse(read_all(mpath), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return bad(mpath + ": not valid JSON (the checkpoint is corrupted)");
  SPPLAN_ASSIGN_OR_RETURN(out.meta, parse_manifest(mpath, j));
  try {
    for (const auto& f : j["files"]) SPPLAN_RETURN_IF_ERROR(read_blob(folder, f, &out));
  } catch (const nlohmann::json::exception&) {  // a files entry of the wrong JSON type
    return bad(mpath + ": a files entry has a name, bytes or fnv1a64 of the wrong type (the checkpoint is corrupted)");
  }
  return out;
}

}  // namespace

uint64_t fnv1a64(const void* data, size_t bytes) {
  uint64_t h = 0xcbf29ce484222325ULL;
  const auto* p = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < bytes; ++i) h = (h ^ p[i]) * 0x100000001b3ULL;
  return h;
}

Status save_checkpoint(const std::string& dir, const CheckpointMeta& meta, const std::vector<BlobRef>& blobs) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  const std::string name = folder_name(meta.step);
  const std::string tmp = dir + "/.tmp-" + name + "-" + std::to_string(::getpid());
  fs::remove_all(tmp, ec);
  if (!fs::create_directory(tmp, ec)) return io_error(tmp, "cannot create folder");
  // A failed write (a full disk) leaves the previous checkpoints as they were and gives back the
  // space of the partial one, so that the next save or another process is not starved too.
  const auto fail = [&](Status s) {
    fs::remove_all(tmp, ec);
    return s;
  };
  for (const auto& b : blobs) {
    if (Status s = write_fsync(tmp + "/" + b.name, b.data, b.bytes); !s) return fail(s);
    fault_point("save");  // the tests' kill with a checkpoint half written
  }
  const std::string manifest = manifest_text(meta, blobs);
  if (Status s = write_fsync(tmp + "/manifest.json", manifest.data(), manifest.size()); !s) return fail(s);
  fsync_dir(tmp);
  const std::string final_dir = dir + "/" + name;
  fs::remove_all(final_dir, ec);
  if (std::rename(tmp.c_str(), final_dir.c_str()) != 0) return fail(io_error(final_dir, "cannot rename into place"));
  fsync_dir(dir);
  SPPLAN_RETURN_IF_ERROR(write_file_atomically(dir + "/LATEST", name + "\n"));
  fsync_dir(dir);
  // Keep this checkpoint and the one before it: if this one is later damaged on disk, a resume
  // falls back to the previous one (load_checkpoint) instead of losing the run.
  const auto kept = checkpoints_newest_first(dir);
  for (size_t i = 2; i < kept.size(); ++i) fs::remove_all(dir + "/" + kept[i].second, ec);
  return Status::ok();
}

Result<LoadedCheckpoint> load_checkpoint(const std::string& dir) {
  if (Status s = check_folder(dir, "", "a folder written by --save"); !s) return bad(s.message());
  if (look_at(dir + "/manifest.json").kind != PathKind::kMissing) return load_folder(dir);  // one ckpt-* folder, named by hand
  std::string latest = read_all(dir + "/LATEST");
  while (!latest.empty() && (latest.back() == '\n' || latest.back() == ' ')) latest.pop_back();
  const auto older = checkpoints_newest_first(dir);
  if ((latest.empty() || latest.find('/') != std::string::npos) && older.empty()) {
    return bad(dir + ": no LATEST file or manifest.json (allowed: a folder written by --save)");
  }
  // LATEST first; when it is damaged (a disk error, a truncated copy), the newest folder that
  // verifies, with a warning naming what was refused. Nothing verifies: the newest one's error.
  std::vector<std::string> candidates;
  if (!latest.empty() && latest.find('/') == std::string::npos) candidates.push_back(latest);
  for (const auto& [step, name] : older) {
    if (name != latest) candidates.push_back(name);
  }
  Status first_error;
  for (const std::string& name : candidates) {
    Result<LoadedCheckpoint> loaded = load_folder(dir + "/" + name);
    if (loaded.ok()) {
      if (!first_error.is_ok()) {
        loaded->warning = first_error.message() + "; resuming from the previous checkpoint " + loaded->folder +
                          " (step " + std::to_string(loaded->meta.step) + ")";
      }
      return loaded;
    }
    if (first_error.is_ok()) first_error = loaded.status();
  }
  return first_error;
}

Result<bool> holds_checkpoint(const std::string& dir, const std::string& flag) {
  const PathInfo info = look_at(dir);
  if (info.kind == PathKind::kMissing) return false;
  if (info.kind != PathKind::kDirectory) return check_folder(dir, flag + ": ", "a folder");
  if (look_at(dir + "/LATEST").kind != PathKind::kMissing || look_at(dir + "/manifest.json").kind != PathKind::kMissing ||
      !checkpoints_newest_first(dir).empty()) {
    return true;
  }
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(".tmp-", 0) == 0) continue;  // a save killed before its rename
    return Status::invalid(flag + ": " + dir + " holds \"" + name + "\" and no checkpoint (allowed: a new or empty "
                           "folder, or one written by --save)");
  }
  return false;
}

std::string model_fingerprint(const ModelSpec& m) {
  std::string f;  // appended piece by piece: GCC 12 misreports "literal" + string chains (-Wrestrict)
  for (const auto& [key, value] : {std::pair<const char*, int64_t>{"L", m.num_hidden_layers}, {" h", m.hidden_size},
                                   {" nh", m.num_attention_heads}, {" kv", m.num_key_value_heads}, {" d", m.head_dim},
                                   {" i", m.intermediate_size}, {" V", m.vocab_size}}) {
    f += key;
    f += std::to_string(value);
  }
  f += m.tie_word_embeddings ? " tied" : " untied";
  if (m.qk_norm) f += " qk_norm";
  return f;
}

Status check_resume(const LoadedCheckpoint& ck, const ModelSpec& model, int64_t total_steps, bool convert_only) {
  const std::string fingerprint = model_fingerprint(model);
  if (ck.meta.model != fingerprint) {
    return bad(ck.folder + ": checkpoint of model \"" + ck.meta.model + "\" (allowed: the run's model \"" + fingerprint +
               "\")");
  }
  if (!convert_only && ck.meta.step >= total_steps) {
    return Status::invalid("--steps: value " + std::to_string(total_steps) + " is not more than the " +
                           std::to_string(ck.meta.step) + " steps already done in " + ck.folder +
                           " (allowed: > " + std::to_string(ck.meta.step) + "; --steps is the total to reach)");
  }
  return Status::ok();
}

Status check_resume_data(const LoadedCheckpoint& ck, const std::string& data, int64_t eos_id) {
  if (ck.meta.eos_id && *ck.meta.eos_id != eos_id) {
    auto text = [](int64_t id) { return id < 0 ? std::string("none") : std::to_string(id); };
    return Status::invalid("--eos-id: value " + text(eos_id) + " differs from the " + text(*ck.meta.eos_id) + " that " +
                           ck.folder + " was trained with (allowed: --eos-id " + text(*ck.meta.eos_id) +
                           (*ck.meta.eos_id < 0 ? std::string(" left out") : std::string()) + ")");
  }
  if (ck.meta.data && *ck.meta.data != data) {
    return Status::invalid("--data: \"" + data + "\" differs from what " + ck.folder + " was trained on: \"" +
                           *ck.meta.data + "\" (allowed: the same files, in the same order)");
  }
  return Status::ok();
}

}  // namespace spplan::engine
