#include "simulator/op_words.hpp"

#include <algorithm>
#include <map>
#include <vector>

#include "planner/core/parse.hpp"

namespace spplan::sim {
namespace {

bool is_number(const std::string& s) { return !s.empty() && s.find_first_not_of("0123456789") == std::string::npos; }

// "t3" -> "tile 4"; "" when it is not a tile.
std::string tile_words(const std::string& part) {
  return part.size() > 1 && part[0] == 't' && is_number(part.substr(1)) ? "tile " + std::to_string(std::stoll(part.substr(1)) + 1) : "";
}

const std::map<std::string, std::string>& words() {
  static const std::map<std::string, std::string> kWords = {
      {"fwd", "forward"},
      {"bwd", "backward"},
      {"rec", "recompute"},
      {"norm", "RMSNorm"},
      {"qkv", "q/k/v projection"},
      {"a2a_qkv", "all-to-all of q/k/v"},
      {"a2a_out", "all-to-all of the attention output"},
      {"attention", "attention"},
      {"out_proj", "output projection"},
      {"mlp", "MLP"},
      {"experts", "MoE MLP (router and experts)"},
      {"ckpt_d2h", "checkpoint copy to the host"},
      {"ckpt_h2d", "checkpoint copy back to the device"},
      {"reduce", "gradient reduction"},
      {"head", "head"},
      {"adam", "AdamW step"},
      {"grad_d2h", "gradient copy to the host"},
      {"param_h2d", "parameter copy to the device"},
      {"param_allgather", "parameter all-gather"},
  };
  return kWords;
}

std::string word(const std::string& part) {
  const auto it = words().find(part);
  return it == words().end() ? part : it->second;
}

// "m1" -> 1; -1 when `part` names no micro step.
long long micro_step(const std::string& part) {
  return part.size() > 1 && part[0] == 'm' && is_number(part.substr(1)) ? std::stoll(part.substr(1)) : -1;
}

// "micro step 2" for micro step 1 (counted from 1 as people count); "" for the first.
std::string micro_words(long long micro) { return micro > 0 ? "micro step " + std::to_string(micro + 1) : ""; }

std::string joined(std::string first, const std::string& then) { return first.empty() ? then : first + ", " + then; }

}  // namespace

std::string op_in_words(const std::string& op_id) {
  std::vector<std::string> parts = split(op_id, ".");
  std::string transfer;  // a ZeRO gather or an offload fetch of the parameters the use needs
  if (parts.size() > 1 && (parts[0] == "gather" || parts[0] == "fetch")) {
    transfer = parts[0] == "gather" ? "parameter gather" : "parameter fetch from the host";
    parts.erase(parts.begin());
  }
  if (parts.size() == 2 && parts[0] == "opt") return "optimizer, " + word(parts[1]);
  const long long micro = micro_step(parts[0]);
  if (parts.size() < 2 || micro < 0) return op_id;
  std::vector<std::string> out;
  for (size_t i = 1; i < parts.size(); ++i) {
    const std::string& p = parts[i];
    if (p.size() > 1 && p[0] == 'L' && is_number(p.substr(1))) {
      out.insert(out.begin(), "layer " + p.substr(1));  // the layer first: what people look for
    } else if (const std::string tile = tile_words(p); !tile.empty()) {
      out.push_back(tile);
    } else if (p == "embed" || p == "loss") {
      out.insert(out.begin(), p == "embed" ? "embedding" : "loss");
    } else {
      out.push_back(word(p));
    }
  }
  if (!transfer.empty()) out.push_back(transfer);
  std::string text = micro_words(micro);
  for (const std::string& w : out) text = joined(text, w);
  return text;
}

std::vector<PhaseStart> phase_starts(const std::vector<SimEvent>& events) {
  std::vector<PhaseStart> starts;
  bool optimizer = false;
  for (const SimEvent& e : events) {
    const std::vector<std::string> parts = split(e.name, ".");
    const long long micro = micro_step(parts[0]);
    if (micro >= 0 && parts.size() == 3 && parts[1] == "embed" && parts[2] == "fwd") {
      starts.push_back({e.start_s, joined(micro_words(micro), "forward")});
    } else if (micro >= 0 && parts.size() >= 3 && parts[1] == "loss" && parts[2] == "bwd" &&
               (parts.size() == 3 || parts[3] == "t0")) {
      starts.push_back({e.start_s, joined(micro_words(micro), "backward")});
    } else if (!optimizer && parts.size() == 2 && parts[0] == "opt") {
      optimizer = true;
      starts.push_back({e.start_s, "optimizer"});
    }
  }
  std::stable_sort(starts.begin(), starts.end(), [](const PhaseStart& a, const PhaseStart& b) { return a.time_s < b.time_s; });
  return starts;
}

}  // namespace spplan::sim
