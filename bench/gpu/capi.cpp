#include "capi.hpp"

namespace fstitch::bench_gpu {
namespace {

TensorSpec describe(const fst_graph* graph, fst_value value, const char* name) {
  TensorSpec spec;
  spec.name = name != nullptr ? name : "";
  require_ok(fst_value_dtype(graph, value, &spec.dtype), "fst_value_dtype");
  size_t rank = 0;
  require_ok(fst_value_rank(graph, value, &rank), "fst_value_rank");
  spec.dims.resize(rank);
  if (rank > 0) require_ok(fst_value_dims(graph, value, rank, spec.dims.data()), "fst_value_dims");
  return spec;
}

}  // namespace

int64_t TensorSpec::count() const {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

size_t TensorSpec::bytes() const {
  return static_cast<size_t>(count()) * fst_dtype_size(dtype);
}

std::vector<TensorSpec> graph_inputs(const fst_graph* graph) {
  size_t count = 0;
  require_ok(fst_graph_input_count(graph, &count), "fst_graph_input_count");
  std::vector<TensorSpec> specs;
  for (size_t i = 0; i < count; ++i) {
    fst_value value = FST_VALUE_INVALID;
    const char* name = nullptr;
    require_ok(fst_graph_input(graph, i, &value, &name), "fst_graph_input");
    specs.push_back(describe(graph, value, name));
  }
  return specs;
}

std::vector<TensorSpec> graph_outputs(const fst_graph* graph) {
  size_t count = 0;
  require_ok(fst_graph_output_count(graph, &count), "fst_graph_output_count");
  std::vector<TensorSpec> specs;
  for (size_t i = 0; i < count; ++i) {
    fst_value value = FST_VALUE_INVALID;
    const char* name = nullptr;
    require_ok(fst_graph_output(graph, i, &value, &name), "fst_graph_output");
    specs.push_back(describe(graph, value, name));
  }
  return specs;
}

ContextHandle create_cuda_context(int ordinal) {
  fst_context_options* raw_options = nullptr;
  require_ok(fst_context_options_create(&raw_options), "fst_context_options_create");
  ContextOptionsHandle options(raw_options);
  require_ok(fst_context_options_set_backend(options.get(), FST_BACKEND_CUDA),
             "fst_context_options_set_backend");
  require_ok(fst_context_options_set_device(options.get(), ordinal), "fst_context_options_set_device");
  fst_context* context = nullptr;
  require_ok(fst_context_create(options.get(), &context), "fst_context_create");
  return ContextHandle(context);
}

GraphHandle parse_graph_text(fst_context* context, const std::string& text) {
  fst_graph* graph = nullptr;
  require_ok(fst_graph_parse(context, text.c_str(), text.size(), &graph), "fst_graph_parse");
  return GraphHandle(graph);
}

FusionHandle fuse_graph(const fst_graph* graph, fst_fusion_policy policy) {
  fst_fuse_options* raw_options = nullptr;
  require_ok(fst_fuse_options_create(&raw_options), "fst_fuse_options_create");
  FuseOptionsHandle options(raw_options);
  require_ok(fst_fuse_options_set_policy(options.get(), policy), "fst_fuse_options_set_policy");
  fst_fusion* fusion = nullptr;
  require_ok(fst_fuse(graph, options.get(), &fusion), "fst_fuse");
  return FusionHandle(fusion);
}

}  // namespace fstitch::bench_gpu
