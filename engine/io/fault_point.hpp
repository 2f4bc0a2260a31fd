// Test hook for the writers: SPPLAN_ENGINE_FAULT="kill-in:NAME" kills this process (SIGKILL, as an
// out-of-memory killer or a node failure would) when it reaches the point NAME: "save" (a
// checkpoint's files half written) or "export" (an --export-hf folder written, not yet in place).
// The tests then find the previous checkpoint and model intact. A no-op without the variable.
#pragma once

namespace spplan::engine {

void fault_point(const char* name);

}  // namespace spplan::engine
