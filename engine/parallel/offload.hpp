// Host memory for what a plan offloads: optimizer state, ZeRO-3 parameter shards, activation
// checkpoints. On a GPU these are CPU tensors (pinned, so copies run at PCIe speed); on the CPU
// they are CPU tensors allocated inside a HostScope, counted as host memory and left out of the
// device peak (memory_meter.hpp). Either way every move between the two is a real copy, so the
// step pays for the traffic the costmodel prices (grad_d2h, param_h2d, ckpt_d2h/h2d).
#pragma once

#include <cstdint>

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include "engine/device/memory_meter.hpp"

namespace spplan::engine {

// A zero-filled host tensor of `numel` elements of `dtype`, tagged `category`, to exchange with
// `device`.
at::Tensor host_zeros(int64_t numel, at::ScalarType dtype, MemCategory category, c10::Device device);

// A host copy of `t` (tagged `category`). `async` (CUDA): the copy into pinned memory is queued on
// the current stream and this returns at once; only stream-ordered work may read the result (a
// later copy_to_device of it, as the activation checkpoints do), never the host itself.
at::Tensor copy_to_host(const at::Tensor& t, MemCategory category, bool async = false);

// A copy of host tensor `host` on `device`, tagged with the current category. From pinned memory
// the copy is queued without blocking the host (the caller must not change `host` until the
// stream has run it: every caller here reads host state that changes only after a synchronising
// optimizer step, or a checkpoint the graph keeps until its backward).
at::Tensor copy_to_device(const at::Tensor& host, c10::Device device);

}  // namespace spplan::engine
