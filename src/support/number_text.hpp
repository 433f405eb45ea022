// Numbers as text, identical in every process: std::to_chars never consults the C or C++
// locale, while printf-family calls and iostreams follow LC_NUMERIC or the global locale
// (a decimal comma turns "0.25f" into the comma expression "0,25f" in generated code).
#pragma once

#include <cstdint>
#include <string>

namespace fstitch {

// The shortest decimal text that reads back as exactly `x`: "0.25", "1e+10", "-0".
// Infinities and NaNs come out as "inf", "-inf", "nan", "-nan".
std::string shortest_text(double x);
std::string shortest_text(float x);

// `x` with exactly `decimals` digits after the point: fixed_text(12.345, 2) == "12.35".
std::string fixed_text(double x, int decimals);

// `x` in "%.<digits>g" style: general_text(0.1, 17) == "0.10000000000000001".
std::string general_text(double x, int digits);

// "0x" and lower-case hex digits: hex_text(0xffc00000) == "0xffc00000".
std::string hex_text(uint64_t x);

}  // namespace fstitch
