// This machine's own figures, read where the system keeps them.
#pragma once

#include <optional>
#include <string>

namespace spplan {

// Installed RAM (MemTotal of `meminfo_path`, /proc/meminfo's format: "MemTotal:  24567 kB"), in
// bytes; nullopt when the file or the line is missing or unreadable.
std::optional<double> machine_ram_bytes(const std::string& meminfo_path = "/proc/meminfo");

}  // namespace spplan
