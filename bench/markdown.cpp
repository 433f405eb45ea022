#include "markdown.hpp"

#include <algorithm>
#include <cstdio>
#include <stdexcept>

namespace fstitch::bench {

MarkdownTable::MarkdownTable(std::vector<Column> columns) : columns_(std::move(columns)) {}

void MarkdownTable::add_row(std::vector<std::string> cells) {
  if (cells.size() > columns_.size()) {
    throw std::invalid_argument("table row has " + std::to_string(cells.size()) + " cells for " +
                                std::to_string(columns_.size()) + " columns");
  }
  cells.resize(columns_.size());
  rows_.push_back(std::move(cells));
}

std::string MarkdownTable::render() const {
  std::vector<size_t> width(columns_.size(), 3);  // "--:" is the narrowest separator
  for (size_t c = 0; c < columns_.size(); ++c) {
    width[c] = std::max(width[c], columns_[c].title.size());
    for (const auto& row : rows_) width[c] = std::max(width[c], row[c].size());
  }
  auto pad = [&](const std::string& text, size_t c) {
    const std::string fill(width[c] - text.size(), ' ');
    return columns_[c].numeric ? fill + text : text + fill;
  };
  std::string out = "|";
  for (size_t c = 0; c < columns_.size(); ++c) out += " " + pad(columns_[c].title, c) + " |";
  out += "\n|";
  for (size_t c = 0; c < columns_.size(); ++c) {
    out += columns_[c].numeric ? " " + std::string(width[c] - 1, '-') + ": |"
                               : " " + std::string(width[c], '-') + " |";
  }
  out += "\n";
  for (const auto& row : rows_) {
    out += "|";
    for (size_t c = 0; c < columns_.size(); ++c) out += " " + pad(row[c], c) + " |";
    out += "\n";
  }
  return out;
}

std::string fixed(double value, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, value);
  return buf;
}

std::string mib(uint64_t bytes) {
  return fixed(static_cast<double>(bytes) / (1024.0 * 1024.0), 2);
}

std::string ratio(uint64_t a, uint64_t b) {
  return b == 0 ? "n/a" : fixed(static_cast<double>(a) / static_cast<double>(b), 2);
}

}  // namespace fstitch::bench
