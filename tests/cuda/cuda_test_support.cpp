#include "cuda/cuda_test_support.hpp"

#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <stdexcept>

#include "common/canonical_graphs.hpp"
#include "ir/text.hpp"

namespace fstitch::cuda_test {

void* FakeCuda::symbol(const char* name) const {
  void* found = dlsym(handle_, name);
  if (found == nullptr) throw std::runtime_error(path_ + " does not export " + name);
  return found;
}

template <class Fn>
void FakeCuda::resolve(Fn** slot, const char* name) {
  *slot = reinterpret_cast<Fn*>(symbol(name));
}

FakeCuda::FakeCuda(std::string path) : path_(std::move(path)) {
  handle_ = dlopen(path_.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle_ == nullptr)
    throw std::runtime_error("cannot load the stand-in driver: " + std::string(dlerror()));
  resolve(&reset, "fake_cuda_reset");
  resolve(&set_init_result, "fake_cuda_set_init_result");
  resolve(&set_driver_version, "fake_cuda_set_driver_version");
  resolve(&set_device_count, "fake_cuda_set_device_count");
  resolve(&set_compute_capability, "fake_cuda_set_compute_capability");
  resolve(&set_multiprocessors, "fake_cuda_set_multiprocessors");
  resolve(&set_max_threads_per_block, "fake_cuda_set_max_threads_per_block");
  resolve(&set_cooperative_launch, "fake_cuda_set_cooperative_launch");
  resolve(&set_memory_pools, "fake_cuda_set_memory_pools");
  resolve(&set_max_active_blocks, "fake_cuda_set_max_active_blocks");
  resolve(&set_kernel_registers, "fake_cuda_set_kernel_registers");
  resolve(&set_reject_cubin, "fake_cuda_set_reject_cubin");
  resolve(&set_param_count, "fake_cuda_set_param_count");
  resolve(&inject, "fake_cuda_inject");
  resolve(&inject_after, "fake_cuda_inject_after");
  resolve(&new_context, "fake_cuda_new_context");
  resolve(&primary_context, "fake_cuda_primary_context");
  resolve(&primary_retain_count, "fake_cuda_primary_retain_count");
  resolve(&describe_function, "fake_cuda_describe_function");
  resolve(&current_context, "fake_cuda_current_context");
  resolve(&context_stack_depth, "fake_cuda_context_stack_depth");
  resolve(&clear_records, "fake_cuda_clear_records");
  resolve(&call_count, "fake_cuda_call_count");
  resolve(&live_allocation_count, "fake_cuda_live_allocation_count");
  resolve(&cuCtxSetCurrent, "cuCtxSetCurrent");
  resolve(&cuStreamCreate, "cuStreamCreate");
  resolve(&call_log_, "fake_cuda_call_log");
  resolve(&launch_count_, "fake_cuda_launch_count");
  resolve(&launch_, "fake_cuda_launch");
  resolve(&allocation_count_, "fake_cuda_allocation_count");
  resolve(&allocation_, "fake_cuda_allocation");
  resolve(&memset_count_, "fake_cuda_memset_count");
  resolve(&memset_, "fake_cuda_memset");
  resolve(&library_count_, "fake_cuda_library_count");
  resolve(&library_, "fake_cuda_library");
}

std::vector<std::string> FakeCuda::call_log() const {
  std::vector<const char*> names(call_log_(nullptr, 0));
  names.resize(std::min(names.size(), call_log_(names.data(), names.size())));
  return std::vector<std::string>(names.begin(), names.end());
}

namespace {

template <class Record>
std::vector<Record> read_records(size_t count, int (*read)(size_t, Record*)) {
  std::vector<Record> records;
  for (size_t i = 0; i < count; ++i) {
    Record r{};
    if (read(i, &r) == 0) break;
    records.push_back(r);
  }
  return records;
}

}  // namespace

std::vector<fake_cuda_launch_record> FakeCuda::launches() const {
  return read_records(launch_count_(), launch_);
}

std::vector<fake_cuda_allocation_record> FakeCuda::allocations() const {
  return read_records(allocation_count_(), allocation_);
}

std::vector<fake_cuda_memset_record> FakeCuda::memsets() const {
  return read_records(memset_count_(), memset_);
}

std::vector<fake_cuda_library_record> FakeCuda::libraries() const {
  return read_records(library_count_(), library_);
}

size_t FakeCuda::find_call(const std::string& entry_point, size_t from) const {
  const std::vector<std::string> log = call_log();
  for (size_t i = from; i < log.size(); ++i) {
    if (log[i] == entry_point) return i;
  }
  return SIZE_MAX;
}

void* FakeCuda::new_stream() {
  CUstream stream = nullptr;
  EXPECT_EQ(cuStreamCreate(&stream, 0), 0);
  return stream;
}

FakeCuda& shared_fake() {
  static FakeCuda* fake = new FakeCuda(FSTITCH_FAKE_CUDA_PATH);
  return *fake;
}

FakeCuda& private_fake(const std::string& tag) {
  namespace fs = std::filesystem;
  // The copies live in a directory of this process, removed when it exits.
  struct CopyDirectory {
    fs::path path = fs::temp_directory_path() / ("fstitch-cuda-test-" + std::to_string(getpid()));
    CopyDirectory() { fs::create_directories(path); }
    ~CopyDirectory() {
      std::error_code ignored;
      fs::remove_all(path, ignored);
    }
  };
  static CopyDirectory directory;
  static std::mutex mutex;
  static std::map<std::string, std::unique_ptr<FakeCuda>> copies;
  std::lock_guard<std::mutex> lock(mutex);
  auto& copy = copies[tag];
  if (!copy) {
    const fs::path file = directory.path / ("libfake_cuda_" + tag + ".so");
    fs::copy_file(FSTITCH_FAKE_CUDA_PATH, file, fs::copy_options::overwrite_existing);
    copy = std::make_unique<FakeCuda>(file.string());
  }
  copy->reset();
  return *copy;
}

std::string test_cache_dir() {
  return FSTITCH_CUDA_TEST_CACHE_DIR;
}

void LogCapture::callback(void* user_data, fst_log_level level, const char* message) {
  (void)level;
  auto* capture = static_cast<LogCapture*>(user_data);
  std::lock_guard<std::mutex> lock(capture->mutex);
  capture->messages.emplace_back(message);
}

std::string LogCapture::text() {
  std::lock_guard<std::mutex> lock(mutex);
  std::string all;
  for (const std::string& m : messages) all += m + "\n";
  return all;
}

fst_status create_context(const std::string& driver_path, const ContextRequest& request, fst_context** out) {
  setenv("FSTITCH_CUDA_DRIVER", driver_path.c_str(), 1);
  fst_context_options* options = nullptr;
  EXPECT_EQ(fst_context_options_create(&options), FST_OK);
  EXPECT_EQ(fst_context_options_set_backend(options, request.backend), FST_OK);
  EXPECT_EQ(fst_context_options_set_device(options, request.device), FST_OK);
  EXPECT_EQ(fst_context_options_set_cache_dir(options, test_cache_dir().c_str()), FST_OK);
  if (request.log != nullptr) {
    EXPECT_EQ(fst_context_options_set_log_level(options, FST_LOG_INFO), FST_OK);
    EXPECT_EQ(fst_context_options_set_log_callback(options, &LogCapture::callback, request.log), FST_OK);
  }
  const fst_status status = fst_context_create(options, out);
  fst_context_options_destroy(options);
  return status;
}

GraphPtr layer_norm_graph(fst_context* context, int64_t rows, int64_t cols) {
  const std::string text = print_graph(testing::layer_norm(rows, cols, DType::kF32));
  fst_graph* graph = nullptr;
  EXPECT_EQ(fst_graph_parse(context, text.c_str(), text.size(), &graph), FST_OK) << fst_last_error_message();
  return GraphPtr(graph);
}

GraphPtr parsed_graph(fst_context* context, const Graph& source) {
  const std::string text = print_graph(source);
  fst_graph* graph = nullptr;
  EXPECT_EQ(fst_graph_parse(context, text.c_str(), text.size(), &graph), FST_OK) << fst_last_error_message();
  return GraphPtr(graph);
}

GraphPtr scale_graph(fst_context* context, int64_t elements) {
  fst_graph* graph = nullptr;
  EXPECT_EQ(fst_graph_create(context, &graph), FST_OK);
  const int64_t dims[1] = {elements};
  fst_value x = fst_input(graph, "x", FST_F32, 1, dims);
  fst_value y = fst_binary(graph, FST_BINARY_ADD,
                           fst_binary(graph, FST_BINARY_MUL, x, fst_constant_f64(graph, FST_F32, 2.0)),
                           fst_constant_f64(graph, FST_F32, 1.0));
  EXPECT_EQ(fst_output(graph, "y", y), FST_OK) << fst_last_error_message();
  return GraphPtr(graph);
}

FusionPtr fuse(const fst_graph* graph, fst_fusion_policy policy, int target_sm) {
  fst_fuse_options* options = nullptr;
  EXPECT_EQ(fst_fuse_options_create(&options), FST_OK);
  EXPECT_EQ(fst_fuse_options_set_policy(options, policy), FST_OK);
  if (target_sm != 0) {
    EXPECT_EQ(fst_fuse_options_set_target_arch(options, target_sm), FST_OK);
  }
  fst_fusion* fusion = nullptr;
  EXPECT_EQ(fst_fuse(graph, options, &fusion), FST_OK) << fst_last_error_message();
  fst_fuse_options_destroy(options);
  return FusionPtr(fusion);
}

std::vector<KernelInfo> kernels_of(const fst_fusion* fusion) {
  size_t count = 0;
  EXPECT_EQ(fst_fusion_kernel_count(fusion, &count), FST_OK);
  std::vector<KernelInfo> kernels(count);
  for (size_t i = 0; i < count; ++i) {
    const fst_kernel* kernel = nullptr;
    EXPECT_EQ(fst_fusion_kernel(fusion, i, &kernel), FST_OK);
    KernelInfo& info = kernels[i];
    const char* name = nullptr;
    EXPECT_EQ(fst_kernel_name(kernel, &name), FST_OK);
    info.name = name;
    EXPECT_EQ(fst_kernel_launch_config(kernel, info.grid, info.block, &info.shared_bytes), FST_OK);
    size_t params = 0;
    EXPECT_EQ(fst_kernel_param_count(kernel, &params), FST_OK);
    for (size_t p = 0; p < params; ++p) {
      KernelInfo::Param param{};
      EXPECT_EQ(fst_kernel_param(kernel, p, &param.kind, &param.index, nullptr), FST_OK);
      info.params.push_back(param);
    }
  }
  return kernels;
}

void record_all_params(FakeCuda& fake, const fst_fusion* fusion) {
  for (const KernelInfo& k : kernels_of(fusion))
    fake.set_param_count(k.name.c_str(), static_cast<int>(k.params.size()));
}

namespace {

// Bytes of `value`: runs refuse buffers whose ranges overlap, so each gets its full size.
size_t value_bytes(const fst_graph* graph, fst_value value) {
  fst_dtype dtype = FST_F32;
  size_t rank = 0;
  int64_t dims[FST_MAX_RANK] = {};
  EXPECT_EQ(fst_value_dtype(graph, value, &dtype), FST_OK);
  EXPECT_EQ(fst_value_rank(graph, value, &rank), FST_OK);
  EXPECT_EQ(fst_value_dims(graph, value, FST_MAX_RANK, dims), FST_OK);
  size_t bytes = fst_dtype_size(dtype);
  for (size_t i = 0; i < rank; ++i) bytes *= static_cast<size_t>(dims[i]);
  return bytes;
}

}  // namespace

RunBuffers::RunBuffers(const fst_graph* graph) {
  size_t ninputs = 0, noutputs = 0;
  EXPECT_EQ(fst_graph_input_count(graph, &ninputs), FST_OK);
  EXPECT_EQ(fst_graph_output_count(graph, &noutputs), FST_OK);
  for (size_t i = 0; i < ninputs + noutputs; ++i) {
    fst_value value = FST_VALUE_INVALID;
    if (i < ninputs) {
      EXPECT_EQ(fst_graph_input(graph, i, &value, nullptr), FST_OK);
    } else {
      EXPECT_EQ(fst_graph_output(graph, i - ninputs, &value, nullptr), FST_OK);
    }
    storage.emplace_back(value_bytes(graph, value));
  }
  for (size_t i = 0; i < ninputs; ++i) inputs.push_back(storage[i].data());
  for (size_t i = 0; i < noutputs; ++i) outputs.push_back(storage[ninputs + i].data());
}

fst_status run(const fst_fusion* fusion, RunBuffers& buffers, void* workspace, void* stream) {
  return fst_fusion_run(fusion, buffers.inputs.data(), buffers.inputs.size(), buffers.outputs.data(),
                        buffers.outputs.size(), workspace, stream);
}

void CudaSeamTest::SetUp() {
  unsetenv("FSTITCH_BACKEND");
  fake_ = &shared_fake();
  fake_->reset();
}

void CudaSeamTest::TearDown() {
  EXPECT_EQ(fake_->context_stack_depth(), 0) << "a CUDA context was left current on the test's thread";
  fake_->reset();
}

ContextPtr CudaSeamTest::cuda_context(LogCapture* log) {
  ContextRequest request;
  request.log = log;
  fst_context* context = nullptr;
  EXPECT_EQ(create_context(fake_->path(), request, &context), FST_OK) << fst_last_error_message();
  return ContextPtr(context);
}

}  // namespace fstitch::cuda_test
