#include "simulator/op_words.hpp"

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

}  // namespace

std::string op_in_words(const std::string& op_id) {
  std::vector<std::string> parts = split(op_id, ".");
  std::string transfer;  // a ZeRO gather or an offload fetch of the parameters the use needs
  if (parts.size() > 1 && (parts[0] == "gather" || parts[0] == "fetch")) {
    transfer = parts[0] == "gather" ? "parameter gather" : "parameter fetch from the host";
    parts.erase(parts.begin());
  }
  if (parts.size() == 2 && parts[0] == "opt") return "optimizer, " + word(parts[1]);
  if (parts.size() < 2 || parts[0].size() < 2 || parts[0][0] != 'm' || !is_number(parts[0].substr(1))) return op_id;
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
  const long long micro = std::stoll(parts[0].substr(1));
  std::string text = micro > 0 ? "micro step " + std::to_string(micro + 1) : "";
  for (const std::string& w : out) text += (text.empty() ? "" : ", ") + w;
  return text;
}

}  // namespace spplan::sim
