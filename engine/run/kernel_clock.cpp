#include "engine/run/kernel_clock.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <vector>

#include <time.h>

#include <ATen/record_function.h>

namespace spplan::engine {
namespace {

// Seconds on the clock the variable chose: wall time ("1"), or this thread's CPU time ("cpu"),
// which other processes sharing the cores do not inflate (meaningful with one thread per rank:
// an op's intra-op threads are not counted).
bool g_thread_cpu_time = false;
double now_s() {
  if (!g_thread_cpu_time) return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

// One op being timed on this thread: when it started, the time of the ops it called, its class.
struct Frame {
  double start = 0;
  double children_s = 0;
  const char* cls = "";
  const char* name = "";  // valid while the op runs
};
thread_local std::vector<Frame> t_open;

std::mutex g_mutex;
std::map<std::string, double> g_classes_s;
// Per "class op" (the same op name can fall in several classes: aten::mul in the layers and in the
// loss): its self seconds and its calls, so that a class's time can be split into bytes moved and a
// cost per call.
std::map<std::string, std::pair<double, int64_t>> g_ops_s;
std::once_flag g_installed;
std::vector<std::string> g_peak_ops;  // the ops open when the device peak last grew (own lock: see below)

// Runs under the memory meter's lock (set_peak_observer): copies names only, no tensors.
void on_peak() {
  std::vector<std::string> ops;
  for (const Frame& f : t_open) ops.emplace_back(f.name);
  g_peak_ops.swap(ops);
}

std::unique_ptr<at::ObserverContext> on_start(const at::RecordFunction& fn) {
  t_open.push_back({now_s(), 0.0, kernel_class_of(fn.name(), memory_category()), fn.name()});
  return nullptr;
}

void on_end(const at::RecordFunction& fn, at::ObserverContext*) {
  if (t_open.empty()) return;  // started before the clock was installed
  const Frame f = t_open.back();
  t_open.pop_back();
  const double total_s = now_s() - f.start;
  if (!t_open.empty()) t_open.back().children_s += total_s;
  const double self_s = std::max(0.0, total_s - f.children_s);
  std::lock_guard<std::mutex> lock(g_mutex);
  g_classes_s[f.cls] += self_s;
  auto& op = g_ops_s[std::string(f.cls) + " " + fn.name()];
  op.first += self_s;
  ++op.second;
}

}  // namespace

bool kernel_clock_requested() {
  const char* v = std::getenv("SPPLAN_ENGINE_KERNEL_CLOCK");
  if (v == nullptr) return false;
  g_thread_cpu_time = std::strcmp(v, "cpu") == 0;
  return g_thread_cpu_time || std::strcmp(v, "1") == 0;
}

void kernel_clock_use_thread_cpu_time(bool on) { g_thread_cpu_time = on; }

void install_kernel_clock() {
  std::call_once(g_installed, [] {
    at::addGlobalCallback(at::RecordFunctionCallback(&on_start, &on_end)
                              .scopes({at::RecordScope::FUNCTION, at::RecordScope::BACKWARD_FUNCTION}));
    set_peak_observer(&on_peak);
  });
}

void kernel_clock_reset() {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_classes_s.clear();
  g_ops_s.clear();
}

std::map<std::string, double> kernel_clock_classes_s() {
  std::lock_guard<std::mutex> lock(g_mutex);
  return g_classes_s;
}

std::vector<std::string> kernel_clock_peak_ops() { return g_peak_ops; }

std::map<std::string, double> kernel_clock_top_ops_s(int how_many) {
  std::vector<std::pair<double, std::string>> ops;
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    for (const auto& [name, s_calls] : g_ops_s) ops.emplace_back(s_calls.first, name);
  }
  std::sort(ops.rbegin(), ops.rend());
  std::map<std::string, double> top;
  for (size_t i = 0; i < ops.size() && static_cast<int>(i) < how_many; ++i) top[ops[i].second] = ops[i].first;
  return top;
}

std::map<std::string, int64_t> kernel_clock_op_calls(const std::map<std::string, double>& ops) {
  std::lock_guard<std::mutex> lock(g_mutex);
  std::map<std::string, int64_t> calls;
  for (const auto& [name, s] : ops) {
    (void)s;
    if (auto it = g_ops_s.find(name); it != g_ops_s.end()) calls[name] = it->second.second;
  }
  return calls;
}

}  // namespace spplan::engine
