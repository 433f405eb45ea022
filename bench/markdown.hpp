// Markdown output: tables padded so the raw text reads as well as the rendered page, and
// number formatting shared by every section.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace fstitch::bench {

struct Column {
  std::string title;
  bool numeric = true;  // right-aligned
};

class MarkdownTable {
 public:
  explicit MarkdownTable(std::vector<Column> columns);
  // Missing trailing cells are left empty; extra cells are an error (std::invalid_argument).
  void add_row(std::vector<std::string> cells);
  std::string render() const;

 private:
  std::vector<Column> columns_;
  std::vector<std::vector<std::string>> rows_;
};

// `value` with `decimals` digits after the point.
std::string fixed(double value, int decimals);
// Bytes as MiB with two decimals.
std::string mib(uint64_t bytes);
// a / b with two decimals, "n/a" when b is 0.
std::string ratio(uint64_t a, uint64_t b);

}  // namespace fstitch::bench
