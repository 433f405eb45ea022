#include "kernel_cases.hpp"

#include "common/canonical_graphs.hpp"
#include "common/reduction_graphs.hpp"

namespace fstitch::bench {
namespace {

struct Shape2 {
  int64_t rows;
  int64_t cols;
};

// LLM hidden sizes (rows = tokens) and ViT-B/16 at batch 64 (197 tokens each): its hidden
// size 768 and its MLP width 3072.
constexpr Shape2 kSm90Shapes[] = {{8192, 4096}, {16384, 1024}, {64 * 197, 768}, {64 * 197, 3072}};
constexpr Shape2 kSm80Shape = {8192, 4096};
// Too few rows for a block each: one long row, one of a million elements (a group as large as
// the device), a batch of GPT-2 vocabulary rows (odd: shifted
// vectors), a batch of LLaMA vocabulary rows (whole vectors).
constexpr Shape2 kFewRowShapes[] = {{1, 100000}, {1, 1 << 20}, {64, 50257}, {4, 32000}};
// ViT-B/16's attention scores at batch 64: 12 heads of 197 x 197, rows of an odd length.
constexpr Shape2 kAttentionShape = {64 * 12 * 197, 197};

void add_canonical(std::vector<KernelCase>& cases, const testing::CanonicalGraph& graph, Shape2 shape,
                   DType dtype, int arch) {
  cases.push_back({graph.name, std::to_string(shape.rows) + "x" + std::to_string(shape.cols), dtype, arch,
                   graph.build(shape.rows, shape.cols, dtype)});
}

void add_reductions(std::vector<KernelCase>& cases, DType dtype, int arch) {
  for (const testing::ShapedGraph& graph : testing::reduction_graphs()) {
    cases.push_back(
        {graph.name, testing::dims_text(graph.dims), dtype, arch, graph.build(graph.dims, dtype)});
  }
}

}  // namespace

std::vector<KernelCase> kernel_cases(bool quick) {
  std::vector<KernelCase> cases;
  if (quick) {
    for (const testing::CanonicalGraph& graph : testing::canonical_graphs()) {
      if (graph.name == "layer_norm") add_canonical(cases, graph, kSm80Shape, DType::kBF16, 90);
    }
    add_reductions(cases, DType::kBF16, 90);
    return cases;
  }
  for (DType dtype : {DType::kF32, DType::kBF16, DType::kF16}) {
    for (const Shape2& shape : kSm90Shapes) {
      for (const testing::CanonicalGraph& graph : testing::canonical_graphs())
        add_canonical(cases, graph, shape, dtype, 90);
    }
    add_reductions(cases, dtype, 90);
  }
  for (DType dtype : {DType::kF32, DType::kBF16}) {
    for (const testing::CanonicalGraph& graph : testing::canonical_graphs()) {
      if (graph.name == "softmax_scale_mask") add_canonical(cases, graph, kAttentionShape, dtype, 90);
    }
    for (const Shape2& shape : kFewRowShapes) {
      for (const testing::CanonicalGraph& graph : testing::canonical_graphs()) {
        if (graph.name == "log_softmax" || graph.name == "layer_norm") add_canonical(cases, graph, shape, dtype, 90);
      }
    }
  }
  for (const testing::CanonicalGraph& graph : testing::canonical_graphs())
    add_canonical(cases, graph, kSm80Shape, DType::kBF16, 80);
  add_reductions(cases, DType::kBF16, 80);
  for (const Shape2& shape : kFewRowShapes) {
    for (const testing::CanonicalGraph& graph : testing::canonical_graphs()) {
      if (graph.name == "log_softmax") add_canonical(cases, graph, shape, DType::kBF16, 80);
    }
  }
  return cases;
}

}  // namespace fstitch::bench
