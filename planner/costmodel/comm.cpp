#include "planner/costmodel/comm.hpp"

#include <algorithm>

#include "planner/core/units.hpp"
#include "planner/costmodel/software_facts.hpp"

namespace spplan::costmodel {

bool group_crosses_nodes(const ClusterSpec& c, int64_t group, int64_t stride) {
  // The group's ranks lie in a span of group x stride consecutive GPUs starting at a multiple of
  // that span: a span up to a node is inside one when the node size is a multiple of it (the
  // power-of-two degrees the search tries on 8-GPU nodes); a larger span crosses.
  return group * stride > c.gpus_per_node();
}

double ring_hop_time_s(const ClusterSpec& c, double bytes, int64_t group, int64_t stride) {
  if (group <= 1 || bytes <= 0) return 0.0;
  const GpuSpec& g = c.gpu;
  const double link_GBps = group_crosses_nodes(c, group, stride) ? g.inter_node_GBps : g.intra_node_GBps;
  return g.collective_latency_s + bytes / (link_GBps * kGB * g.comm_efficiency);
}

double collective_time_s(const ClusterSpec& c, Collective kind, double bytes, int64_t group, int64_t stride) {
  if (group <= 1 || bytes <= 0) return 0.0;
  const GpuSpec& g = c.gpu;
  const double intra_Bps = g.intra_node_GBps * kGB * g.comm_efficiency;
  const double inter_Bps = g.inter_node_GBps * kGB * g.comm_efficiency;
  const double n = static_cast<double>(group);
  if (kind == Collective::kAllToAll) {
    // Each rank sends bytes/n to every peer at once: the peers in its node over NVLink, the others
    // over its NIC, in parallel; the slower of the two finishes the collective.
    const int64_t in_node = std::max<int64_t>(1, g.gpus_per_node / stride);  // group members per node
    const double local_peers = static_cast<double>(std::min(group, in_node) - 1);
    const double remote_peers = n - 1 - local_peers;
    const double time_s = std::max(bytes / n * local_peers / intra_Bps, bytes / n * remote_peers / inter_Bps);
    return g.collective_latency_s + time_s;
  }
  // Ring collectives: (n-1)/n of the data crosses every link, group-1 steps each paying the
  // latency; a ring that spans nodes runs at the network's per-GPU rate.
  const double link_Bps = group_crosses_nodes(c, group, stride) ? inter_Bps : intra_Bps;
  double wire_bytes = bytes * (n - 1) / n;
  if (kind == Collective::kAllReduce) wire_bytes *= 2.0;  // reduce-scatter then all-gather
  return (n - 1) * g.collective_latency_s + wire_bytes / link_Bps;
}

double pcie_copy_time_s(const GpuSpec& g, double bytes, bool pageable) {
  if (bytes <= 0) return 0.0;
  const double efficiency = g.comm_efficiency * (pageable ? facts::kPageableCopyEfficiency : 1.0);
  return bytes / (g.pcie_GBps * kGB * efficiency);
}

}  // namespace spplan::costmodel
