#include "engine/model/parameters.hpp"

#include <algorithm>

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

namespace spplan::engine {

std::vector<std::vector<ParamDecl>> param_units(const ModelSpec& spec) {
  const int64_t h = spec.hidden_size, d = spec.head_dim, i = spec.intermediate_size, V = spec.vocab_size;
  const int64_t qkv = (spec.num_attention_heads + 2 * spec.num_key_value_heads) * d;
  std::vector<std::vector<ParamDecl>> units{{{{V, h}, false}}};
  for (int64_t l = 0; l < spec.num_hidden_layers; ++l) {
    std::vector<ParamDecl> layer{{{h}, true}, {{qkv, h}, false}};
    if (spec.attention_bias) layer.push_back({{qkv}, false, true});
    if (spec.qk_norm) layer.insert(layer.end(), {{{d}, true}, {{d}, true}});
    layer.insert(layer.end(), {{{h, spec.q_dim()}, false}, {{h}, true}});
    if (spec.is_moe() && l >= spec.first_dense_layers) {
      // The router (with GLM-4.5's correction bias), every expert's gate|up and down stacked, and
      // GLM-4.5's shared expert (moe.hpp).
      const int64_t E = spec.num_experts, ie = spec.moe_intermediate_size, is = spec.shared_expert_intermediate_size;
      layer.push_back({{E, h}, false});
      if (spec.router_sigmoid) layer.push_back({{E}, false, true, true});
      layer.insert(layer.end(), {{{E, 2 * ie, h}, false}, {{E, h, ie}, false}});
      if (is > 0) layer.insert(layer.end(), {{{2 * is, h}, false}, {{h, is}, false}});
    } else {
      layer.insert(layer.end(), {{{2 * i, h}, false}, {{h, i}, false}});
    }
    units.push_back(layer);
  }
  units.push_back({{{h}, true}});
  if (!spec.tie_word_embeddings) units.back().push_back({{V, h}, false});
  return units;
}

std::vector<std::vector<Shape>> shapes_of(const std::vector<std::vector<ParamDecl>>& units) {
  std::vector<std::vector<Shape>> out;
  for (const auto& unit : units) {
    out.emplace_back();
    for (const ParamDecl& p : unit) out.back().push_back(p.shape);
  }
  return out;
}

std::vector<std::vector<DecaySpan>> decay_spans(const std::vector<std::vector<ParamDecl>>& units,
                                                const ZeroLayout& layout, bool all) {
  std::vector<std::vector<DecaySpan>> out;
  for (size_t u = 0; u < units.size(); ++u) {
    const ZeroUnit& unit = layout.units()[u];
    const int64_t own_begin = layout.rank() * unit.chunk, own_end = own_begin + unit.chunk;
    std::vector<DecaySpan> spans;
    const auto add = [&](int64_t begin, int64_t end, bool decay) {  // [begin, end) of the unit
      begin = std::max(begin, own_begin), end = std::min(end, own_end);
      if (begin >= end) return;
      if (!spans.empty() && spans.back().decay == decay) {
        spans.back().length += end - begin;
      } else {
        spans.push_back({begin - own_begin, end - begin, decay});
      }
    };
    int64_t offset = 0;
    for (const ParamDecl& p : units[u]) {
      int64_t numel = 1;
      for (const int64_t dim : p.shape) numel *= dim;
      add(offset, offset + numel, !p.is_buffer && (all || !(p.is_norm || p.is_bias)));
      offset += numel;
    }
    add(offset, layout.world() * unit.chunk, false);  // padding
    out.push_back(std::move(spans));
  }
  return out;
}

void init_params(at::Tensor& full, const ZeroLayout& layout, const std::vector<std::vector<ParamDecl>>& decls,
                 uint64_t seed) {
  auto gen = at::make_generator<at::CPUGeneratorImpl>(seed);
  full.zero_();
  for (size_t u = 0; u < decls.size(); ++u) {
    const ZeroUnit& unit = layout.units()[u];
    const std::vector<at::Tensor> views = ZeroLayout::carve(layout.unit_of(full, unit), unit);
    for (size_t i = 0; i < views.size(); ++i) {
      const bool direct = full.is_cpu() && full.scalar_type() == at::kFloat;
      at::Tensor init = direct ? views[i] : at::empty(views[i].sizes(), at::kFloat);
      if (decls[u][i].is_norm) {
        init.fill_(1.0);
      } else if (decls[u][i].is_bias) {
        init.zero_();  // as transformers' _init_weights: Linear biases start at 0
      } else {
        init.normal_(0.0, 0.02, gen);
      }
      if (!direct) views[i].copy_(init);
    }
  }
}

}  // namespace spplan::engine
