// Time of every collective and host<->device copy, through one function each, so bandwidths and
// efficiencies are applied in one place. Seconds.
#pragma once

#include <cstdint>

#include "planner/config/cluster_spec.hpp"

namespace spplan::costmodel {

enum class Collective { kAllToAll, kAllGather, kReduceScatter, kAllReduce };

// `bytes`: the full tensor one rank ends with (all-gather), starts with (reduce-scatter,
// all-reduce) or sends in total (all-to-all). `group` ranks, `stride` GPUs apart (1: consecutive
// GPUs), so a group spanning more than a node crosses the network, whose per-GPU bandwidth then
// bounds it. Ring-attention groups are strided by sp (Ulysses groups are consecutive).
double collective_time_s(const ClusterSpec& cluster, Collective kind, double bytes, int64_t group,
                         int64_t stride = 1);

// One point-to-point transfer of `bytes` from a rank to its neighbour `stride` GPUs away in a ring
// of `group` ranks, every rank sending at once (NCCL send/recv): the latency plus the bytes at the
// link the ring uses: the network once the ring spans more than a node (a ring is as slow as its
// slowest hop), NVLink otherwise.
double ring_hop_time_s(const ClusterSpec& cluster, double bytes, int64_t group, int64_t stride);

// True when a group of `group` ranks `stride` apart does not sit inside one node.
bool group_crosses_nodes(const ClusterSpec& cluster, int64_t group, int64_t stride);

// Host<->device copy over PCIe; `pageable` for plain .cpu()/.to() copies of unpinned memory.
double pcie_copy_time_s(const GpuSpec& gpu, double bytes, bool pageable);

}  // namespace spplan::costmodel
