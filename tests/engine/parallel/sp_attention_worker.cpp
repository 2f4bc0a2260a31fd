// One rank of the Ulysses and ring checks, started N times by engine_tests (through the engine's
// launcher):
//   engine_sp_attention_worker --nproc N [--cp C]      (sp = N / C)
// Every rank builds the same full-sequence tensors from one seed, keeps its rows (s/P contiguous
// ones, or with --cp its zigzag share: io/data.hpp zigzag_positions), and checks:
//  1. seq_to_heads hands it exactly its heads of every token, and heads_to_seq(seq_to_heads(x)) == x
//     bit for bit; qkv_to_heads hands it its q, k and v heads of every token (K/V heads sharded, and
//     one replicated to every rank);
//  2. sp_causal_attention and its gradients (q, k, v) equal single-process causal_attention on the
//     full sequence within 1e-5, for KV heads both sharded (h_kv % P == 0) and replicated (h_kv < P);
//     with --cp the same through ring attention over the CP group (Ulysses x ring when sp > 1),
//     grouped-query K/V included.
//  3. with --cp, packed documents: the ring's attention per document and its gradients equal
//     single-process document_causal_attention on the full sequence within 1e-5, for a table of
//     document layouts (ends on, beside and away from the zigzag chunks' edges, one-token
//     documents, a document reaching from a rank's first chunk into its second, one per batch row).
// Prints one line per failure; exit 0 when all pass.
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <iterator>
#include <string>
#include <vector>

#include <ATen/ATen.h>

#include "engine/io/data.hpp"
#include "engine/model/attention.hpp"
#include "engine/parallel/ulysses.hpp"
#include "engine/run/launcher.hpp"

namespace {

using spplan::engine::Comm;
int g_failures = 0;

void expect(bool ok, const std::string& what) {
  if (!ok) {
    std::cerr << "FAIL: " << what << std::endl;
    ++g_failures;
  }
}

at::Tensor rows(const at::Tensor& full, const Comm& c) {  // this rank's tokens, dim 1
  if (c.cp() > 1) {  // the zigzag share of the ring's sequence
    const std::vector<int64_t> pos = spplan::engine::zigzag_positions(full.size(1), c.sp(), c.sp_rank(), c.cp(), c.cp_rank());
    return full.index_select(1, at::tensor(pos, at::kLong));
  }
  const int64_t n = full.size(1) / c.sp();
  return full.narrow(1, c.sp_rank() * n, n);
}

void check_round_trip(Comm& comm) {
  const int64_t P = comm.sp(), b = 2, s = 64 * P, h = 4 * P, d = 16;
  const at::Tensor full = at::randn({b, s, h, d}, at::kFloat);
  const int64_t n = s / P;  // each SP group exchanges its own tensor: contiguous rows of it
  const at::Tensor mine = full.narrow(1, comm.sp_rank() * n, n).contiguous();
  const at::Tensor heads = spplan::engine::seq_to_heads(comm, mine);
  expect(at::equal(heads, full.narrow(2, comm.sp_rank() * (h / P), h / P)), "seq_to_heads: not my heads of all tokens");
  expect(at::equal(spplan::engine::heads_to_seq(comm, heads), mine), "heads_to_seq(seq_to_heads(x)) != x");
}

void check_qkv_exchange(Comm& comm, int64_t h_kv) {
  const int64_t P = comm.sp(), b = 2, s = 64 * P, h = 4 * P, d = 16, n = s / P;
  const at::Tensor q = at::randn({b, s, h, d}), k = at::randn({b, s, h_kv, d}), v = at::randn({b, s, h_kv, d});
  auto mine = [&](const at::Tensor& x) { return x.narrow(1, comm.sp_rank() * n, n).contiguous(); };
  const at::Tensor got = spplan::engine::qkv_to_heads(comm, mine(q), mine(k), mine(v));
  const int64_t hq = h / P, hkv = h_kv < P ? 1 : h_kv / P, first_kv = h_kv < P ? comm.sp_rank() * h_kv / P : comm.sp_rank() * hkv;
  const at::Tensor want = at::cat({q.narrow(2, comm.sp_rank() * hq, hq), k.narrow(2, first_kv, hkv), v.narrow(2, first_kv, hkv)}, 2);
  expect(at::equal(got, want), "qkv_to_heads with h_kv " + std::to_string(h_kv) + ": not my q, k, v heads of all tokens");
}

void check_attention(Comm& comm, int64_t h, int64_t h_kv) {
  const int64_t b = 2, s = 96 * comm.sp() * comm.cp(), d = 16;
  const std::string name = "h " + std::to_string(h) + " h_kv " + std::to_string(h_kv) + ": ";
  const at::Tensor q = at::randn({b, s, h, d}).requires_grad_(), k = at::randn({b, s, h_kv, d}).requires_grad_(),
                   v = at::randn({b, s, h_kv, d}).requires_grad_(), w = at::randn({b, s, h, d});
  const at::Tensor ref = spplan::engine::causal_attention(q, k, v);
  (ref * w).sum().backward();

  const at::Tensor qs = rows(q, comm).detach().clone().requires_grad_(), ks = rows(k, comm).detach().clone().requires_grad_(),
                   vs = rows(v, comm).detach().clone().requires_grad_();
  const at::Tensor out = spplan::engine::sp_causal_attention(comm, qs, ks, vs);
  (out * rows(w, comm)).sum().backward();
  auto close = [](const at::Tensor& a, const at::Tensor& e) { return (a - e).abs().max().item<double>() <= 1e-5; };
  expect(close(out, rows(ref, comm)), name + "output differs from single-process attention");
  // Each rank holds the gradient rows of its own tokens (replicated KV heads sum in the backward).
  expect(close(qs.grad(), rows(q.grad(), comm)), name + "dq differs");
  expect(close(ks.grad(), rows(k.grad(), comm)), name + "dk differs");
  expect(close(vs.grad(), rows(v.grad(), comm)), name + "dv differs");
}

// Document starts for a sequence of s = 2 cp chunks tokens (chunk = s / (2 cp)), per batch row.
struct DocLayout {
  const char* name;
  std::vector<int64_t> (*starts)(int64_t s, int64_t chunk);
};
const DocLayout kDocLayouts[] = {
    {"one document", [](int64_t, int64_t) { return std::vector<int64_t>{0}; }},
    {"ends on the chunk edges", [](int64_t s, int64_t chunk) {
       std::vector<int64_t> v;
       for (int64_t t = 0; t < s; t += chunk) v.push_back(t);
       return v;
     }},
    {"ends beside the edges, one-token documents", [](int64_t s, int64_t chunk) {
       return std::vector<int64_t>{0, chunk - 1, chunk, chunk + 1, s / 2 + 3, s - 1};
     }},
    {"a long document from the first chunk to the last", [](int64_t s, int64_t chunk) {
       return std::vector<int64_t>{0, chunk / 3, s - chunk / 2};
     }},
    {"many short documents", [](int64_t s, int64_t) {
       std::vector<int64_t> v{0};
       for (int64_t t = 7, len = 5; t < s; len = len % 17 + 3, t += len) v.push_back(t);
       return v;
     }},
};

void check_packed_attention(Comm& comm, int64_t h, int64_t h_kv) {
  const int64_t b = 2, s = 96 * comm.sp() * comm.cp(), d = 16, chunk = s / (2 * comm.cp());
  for (size_t l = 0; l < std::size(kDocLayouts); ++l) {
    const DocLayout& layout = kDocLayouts[l];
    // Row 0 takes the layout, row 1 the next one: the ring's pieces differ per batch row.
    const spplan::engine::DocStarts docs = {layout.starts(s, chunk), kDocLayouts[(l + 1) % std::size(kDocLayouts)].starts(s, chunk)};
    const std::string name = std::string("packed, ") + layout.name + ", h " + std::to_string(h) + " h_kv " +
                             std::to_string(h_kv) + ": ";
    const at::Tensor q = at::randn({b, s, h, d}).requires_grad_(), k = at::randn({b, s, h_kv, d}).requires_grad_(),
                     v = at::randn({b, s, h_kv, d}).requires_grad_(), w = at::randn({b, s, h, d});
    const at::Tensor ref = spplan::engine::document_causal_attention(q, k, v, docs);
    (ref * w).sum().backward();
    const at::Tensor qs = rows(q, comm).detach().clone().requires_grad_(),
                     ks = rows(k, comm).detach().clone().requires_grad_(),
                     vs = rows(v, comm).detach().clone().requires_grad_();
    const at::Tensor out = spplan::engine::sp_causal_attention(comm, qs, ks, vs, docs);
    (out * rows(w, comm)).sum().backward();
    auto close = [](const at::Tensor& a, const at::Tensor& e) { return (a - e).abs().max().item<double>() <= 1e-5; };
    expect(close(out, rows(ref, comm)), name + "output differs from single-process document attention");
    expect(close(qs.grad(), rows(q.grad(), comm)), name + "dq differs");
    expect(close(ks.grad(), rows(k.grad(), comm)), name + "dk differs");
    expect(close(vs.grad(), rows(v.grad(), comm)), name + "dv differs");
  }
}

}  // namespace

int main(int argc, char** argv) {
  if ((argc == 3 || argc == 5) && std::string(argv[1]) == "--nproc" && !spplan::engine::is_launched_child()) {
    return spplan::engine::launch_local(std::atoll(argv[2]), argc, argv);
  }
  const auto env = spplan::engine::read_dist_env();
  if (!env.ok() || !env->has_value()) {
    std::cerr << "usage: engine_sp_attention_worker --nproc N [--cp C]" << std::endl;
    return 2;
  }
  try {
    const spplan::engine::DistEnv& e = **env;
    const int64_t cp = argc == 5 && std::string(argv[3]) == "--cp" ? std::atoll(argv[4]) : 1;
    Comm comm(e, /*sp=*/e.world / cp, c10::Device(c10::kCPU), std::chrono::seconds(30), cp);
    at::manual_seed(1234);  // the same full tensors on every rank
    check_round_trip(comm);
    if (cp == 1) {
      check_qkv_exchange(comm, 2 * comm.sp());
      if (comm.sp() > 1) check_qkv_exchange(comm, 1);
    }
    check_attention(comm, 4 * comm.sp(), 2 * comm.sp());  // KV heads sharded
    if (comm.sp() > 1) check_attention(comm, 2 * comm.sp(), 1);  // one KV head replicated P times
    check_attention(comm, 2 * comm.sp(), comm.sp());      // one KV head per rank
    if (cp > 1) check_packed_attention(comm, 4 * comm.sp(), 2 * comm.sp());
  } catch (const std::exception& ex) {
    std::cerr << "FAIL: " << std::string(ex.what()).substr(0, std::string(ex.what()).find('\n')) << std::endl;
    return 1;
  }
  return g_failures == 0 ? 0 : 1;
}
