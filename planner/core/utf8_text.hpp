// Text that must be UTF-8: JSON output (nlohmann's dump() throws type_error 316 on any other byte),
// TOML files (TOML 1.0: "A TOML file must be a valid UTF-8 encoded Unicode document") and Python
// strings. A model's name comes from a config.json's folder, and a Latin-1 folder name
// ("mod\xe8le") is not UTF-8; neither need a validation CSV's cells be.
#pragma once

#include <string>
#include <string_view>

namespace spplan {

// Whether `text` is well-formed UTF-8 (Unicode 15, table 3-7: no overlong forms, no surrogates,
// nothing past U+10FFFF), as nlohmann's dump() requires.
bool is_utf8(std::string_view text);

// `text` with every byte that is not part of a well-formed UTF-8 sequence written as the four
// characters "\xNN" (lower-case hex, as printable() writes control bytes), so that the byte stays
// visible; well-formed text comes back unchanged.
std::string utf8_text(std::string_view text);

}  // namespace spplan
