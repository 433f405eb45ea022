// Reductions over axes other than the innermost one, built the way a framework decomposes
// them: the column reduction of a linear layer's bias gradient and a reduction over the
// middle axis of a 3-D tensor. Shared by the differential tests, the static kernel report
// and the GPU benchmark.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "common/shaped_graph.hpp"
#include "ir/graph.hpp"

namespace fstitch::testing {

// The bias gradient of y = x W + b: db = sum(dy, axis 0) of dy [rows, cols], giving [cols].
Graph bias_grad_column_sum(int64_t rows, int64_t cols, DType dtype);

// sum(x, axis 1) of x [outer, middle, inner], giving [outer, inner]: a reduction whose
// reduced axis has kept axes on both sides.
Graph middle_axis_sum(int64_t outer, int64_t middle, int64_t inner, DType dtype);

// softmax(x, axis 0) of x [rows, cols]: a max and a sum of exp(x - max) down each column,
// then every element divided by its column's sum (16-bit inputs computed in f32).
Graph column_softmax(int64_t rows, int64_t cols, DType dtype);

// Graphs that pass over a non-innermost axis several times: softmax and log-softmax (a max,
// then a sum of exp(x - max)), a normalization ((x - mean) * rsqrt(var + eps), its mean also
// stored), and x minus its mean; over `axes` of x, computed in `dtype` as built.
enum class ColumnPassGraph { kSoftmax, kLogSoftmax, kNormalize, kCentered };
const char* column_pass_graph_name(ColumnPassGraph kind);
Graph column_pass_graph(ColumnPassGraph kind, DType dtype, const Dims& dims,
                        const std::vector<int64_t>& axes);

// LayerNorm backward over x, dy [rows, cols] and gamma w [cols]: outputs dx (by rows),
// dgamma = sum(dy * xhat, axis 0) and dbeta = sum(dy, axis 0) (by columns).
Graph layer_norm_backward(int64_t rows, int64_t cols, DType dtype);
// The same added to `g`, its inputs and outputs named with `suffix` (x<suffix>, dx<suffix>...).
void add_layer_norm_backward(Graph& g, int64_t rows, int64_t cols, DType dtype, const std::string& suffix);

// RMSNorm backward: dx and dgamma = sum(dy * xhat, axis 0) kept as [1, cols].
Graph rms_norm_backward(int64_t rows, int64_t cols, DType dtype);

// GroupNorm of x [n, c, hw] over `groups` groups of channels: statistics over the reshaped
// view [n, groups, c / groups * hw], then the per-channel affine y * gamma + beta (gamma and
// beta [c, 1]) on x's shape again; 16-bit inputs computed in f32. kResidualAndMean also adds
// a residual input and outputs the groups' mean [n, groups, 1].
struct GroupNormShape {
  int64_t n, c, hw, groups;
};
enum class GroupNormExtras { kNone, kResidualAndMean };
Graph group_norm(const GroupNormShape& shape, DType dtype, GroupNormExtras extras = GroupNormExtras::kNone);
// BatchNorm's training forward over x [N, C, H, W]: the batch statistics of each channel
// (mean and biased variance over N, H and W: axes 0, 2 and 3, not one contiguous run), then
// y = (x - mean) * rsqrt(var + 1e-5) * gamma + beta with gamma and beta [C, 1, 1]. Outputs y,
// and the mean and variance [1, C, 1, 1] a framework folds into its running statistics.
// 16-bit inputs computed in f32.
Graph batch_norm_training(const Dims& nchw, DType dtype);
// InstanceNorm over x [N, C, H, W]: the statistics of each image's channel (mean and biased
// variance over H and W, axes 2 and 3), y = (x - mean) * rsqrt(var + 1e-5) * gamma + beta
// with gamma and beta [C, 1, 1] (rows of H x W columns: 56 x 56 = 3136, whose 16-byte
// vectors split evenly among no block's threads). 16-bit inputs computed in f32.
Graph instance_norm(const Dims& nchw, DType dtype);

// One Sinkhorn step over x [rows, cols]: y = softmax over each row, s = the sums of y down
// each column [1, cols], then kScaled: z = y / s (the output); kWithSoftmaxAndSums: z, y and s
// are outputs; kInputScaled: z = x / s; kReciprocal: z = y * (1 / s), the reciprocal taken
// on s's own shape; kPlusInput: z = y / s + x; kRowsNormalizedAgain: the output is
// (y / s) / sum(y / s, axis 1), a full Sinkhorn iteration; kInputRowsNormalizedAgain: the
// same with x / s in place of y / s (nothing of the rows crosses the barrier). 16-bit inputs
// computed in f32, z rounded back.
enum class SinkhornForm : uint8_t {
  kScaled,
  kWithSoftmaxAndSums,
  kInputScaled,
  kReciprocal,
  kPlusInput,
  kRowsNormalizedAgain,
  kInputRowsNormalizedAgain,
};
Graph sinkhorn_step(int64_t rows, int64_t cols, DType dtype, SinkhornForm form = SinkhornForm::kScaled);

// Sinkhorn iterations over x [rows, cols]: z = softmax over each row, then `iterations` times
// z = z / sum(z, axis 0), z = z / sum(z, axis 1); with kSumsOut the sums of the result down
// its columns are an output too (f32 or f64). SinkhornDividend::kInput divides x in place of z
// by 1 + the column sums of |z|, then z by 1 + the row sums of |z| (nothing of the rows crosses
// a barrier, and no divisor nears zero). 16-bit inputs computed in f32, z rounded back.
enum class SinkhornOutputs : uint8_t { kMatrix, kSumsOut };
enum class SinkhornDividend : uint8_t { kIterate, kInput };
Graph sinkhorn_iterations(int64_t rows, int64_t cols, DType dtype, int iterations,
                          SinkhornOutputs outputs = SinkhornOutputs::kMatrix,
                          SinkhornDividend dividend = SinkhornDividend::kIterate);

// Its backward: from x, dy, the saved mean and rstd [1, C, 1, 1] and gamma [C, 1, 1], with
// xhat = (x - mean) * rstd: dx = gamma * rstd * (dy - mean(dy) - xhat * mean(dy * xhat)),
// dgamma = sum(dy * xhat) and dbeta = sum(dy), the means and sums over axes 0, 2 and 3 (dgamma
// and dbeta [C]). 16-bit inputs computed in f32.
Graph batch_norm_backward(const Dims& nchw, DType dtype);

// GroupNorm of channels-last x [N, HW, C]: the statistics over [N, HW, G, C/G] (axes 1 and
// 3, not one run), the affine (gamma and beta [C]) over [N, HW, C]. 16-bit inputs computed in
// f32.
Graph group_norm_channels_last(const GroupNormShape& shape, DType dtype);

// The groups of the benchmarks' GroupNorm (as in most vision models).
inline constexpr int64_t kBenchmarkGroups = 32;

// bias_grad_column_sum at [8192, 1024], middle_axis_sum at [64, 4096, 64], column_softmax
// at [4096, 1024] and (column_softmax_large) at [16384, 768], layer_norm_backward and
// rms_norm_backward at [8192, 1024], group_norm (32 groups) at [8, 512, 4096], batch_norm
// (batch_norm_training) and instance_norm at [32, 64, 56, 56], sinkhorn_step and
// sinkhorn_iteration (SinkhornForm::kRowsNormalizedAgain) and sinkhorn_two_iterations
// (sinkhorn_iterations, 2) at [4096, 1024]
// (dims are x's; their other inputs follow from them); in the --check mode at [256, 1024],
// [8, 256, 64], [4, 16, 8, 8] or [2, 8, 28, 28].
const std::vector<ShapedGraph>& reduction_graphs();

}  // namespace fstitch::testing
