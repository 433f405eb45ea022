/*
 * fstitch — fusion and stitching of memory-intensive deep-learning operators.
 *
 * This header is the whole public API of libfstitch. It is C99, has a stable ABI
 * (SONAME libfstitch.so.1) and does not include any CUDA header: streams and
 * contexts travel as `void*`.
 *
 * Conventions
 * -----------
 * - Every fallible function returns an ::fst_status; ::FST_OK is 0. On failure the
 *   output parameters are left untouched and fst_last_error_message() describes the
 *   failure for the calling thread.
 * - Graph builders (fst_input(), fst_unary(), fst_reduce(), ...) return an ::fst_value
 *   instead of a status. A builder that fails returns ::FST_VALUE_INVALID and puts the
 *   graph in an error state (the first error is kept, as in Cairo): every later
 *   builder on that graph does nothing and returns ::FST_VALUE_INVALID, and every
 *   function that consumes the graph (verify, print, evaluate, fuse) returns the first
 *   error's status and message. fst_graph_status() reports it at any time, so a
 *   builder error cannot be lost.
 * - `*_destroy` functions return void and accept NULL.
 * - Handles are opaque. Each handle's thread-safety is documented on its type.
 */
#ifndef FSTITCH_H
#define FSTITCH_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(FSTITCH_BUILDING_LIBRARY) && defined(__GNUC__)
#define FST_API __attribute__((visibility("default")))
#else
#define FST_API
#endif

/* ------------------------------------------------------------------------ */
/** @name Version
 *  @{ */

/** Major version of the library (source compatibility). */
#define FST_VERSION_MAJOR 0
/** Minor version of the library. */
#define FST_VERSION_MINOR 3
/** Patch version of the library. */
#define FST_VERSION_PATCH 0
/** The version as one number: major * 10000 + minor * 100 + patch. */
#define FST_VERSION_NUMBER (FST_VERSION_MAJOR * 10000 + FST_VERSION_MINOR * 100 + FST_VERSION_PATCH)
/** ABI major version; the library's SONAME is libfstitch.so.<FST_ABI_VERSION>. */
#define FST_ABI_VERSION 1

/**
 * @brief Version of the library that is loaded at run time.
 * @return major * 10000 + minor * 100 + patch; compare with ::FST_VERSION_NUMBER.
 * Never fails. Thread-safe.
 */
FST_API unsigned fst_version_number(void);

/**
 * @brief Version of the loaded library as text, e.g. "0.1.0".
 * @return A static string owned by the library; never NULL. Thread-safe.
 */
FST_API const char* fst_version_string(void);
/** @} */

/* ------------------------------------------------------------------------ */
/** @name Status and errors
 *  @{ */

/** Result of every fallible call. */
typedef enum fst_status {
  FST_OK = 0,                     /**< Success. */
  FST_ERROR_INVALID_ARGUMENT = 1, /**< A NULL handle or pointer, an unknown enum value, a bad name... */
  FST_ERROR_SHAPE = 2,            /**< Shapes do not fit: ranks, dims, axes, broadcasting, element counts. */
  FST_ERROR_DTYPE = 3,            /**< An operand's dtype is not accepted by the operation. */
  FST_ERROR_UNSUPPORTED = 4,      /**< Valid request that this version does not support. */
  FST_ERROR_OUT_OF_MEMORY = 5,    /**< A host or device allocation failed. */
  FST_ERROR_NO_DEVICE = 6,        /**< The driver works but there is no usable GPU. */
  FST_ERROR_NO_DRIVER = 7,        /**< The CUDA driver library could not be loaded or initialized. */
  FST_ERROR_NO_COMPILER = 8,      /**< No NVRTC or host compiler could be found. */
  FST_ERROR_COMPILE = 9,          /**< A generated kernel failed to compile; the message has the log. */
  FST_ERROR_LAUNCH = 10,          /**< A kernel launch or a driver call failed. */
  FST_ERROR_PARSE = 11,           /**< Graph text is malformed; the message has line and column. */
  FST_ERROR_INTERNAL = 12         /**< A bug in fstitch; please report it with the message. */
} fst_status;

/**
 * @brief Short name of a status, e.g. "FST_ERROR_SHAPE".
 * @return A static string; "FST_STATUS_UNKNOWN" for values outside ::fst_status. Thread-safe.
 */
FST_API const char* fst_status_string(fst_status status);

/**
 * @brief Message of the calling thread's most recent failed fstitch call.
 *
 * It names the function, the argument and the value at fault. Successful calls do not
 * clear it. The string is owned by the library and stays valid until the next failing
 * fstitch call on the same thread.
 * @return Never NULL; "" if no call has failed on this thread. Thread-safe (per thread).
 */
FST_API const char* fst_last_error_message(void);

/**
 * @brief Status of the calling thread's most recent failed fstitch call, ::FST_OK if none.
 * Thread-safe (per thread).
 */
FST_API fst_status fst_last_error_status(void);
/** @} */

/* ------------------------------------------------------------------------ */
/** @name Data types
 *  @{ */

/** Element types. f16 and bf16 are stored natively (as 16-bit patterns) and computed in f32. */
typedef enum fst_dtype {
  FST_F32 = 1,  /**< IEEE binary32. */
  FST_F16 = 2,  /**< IEEE binary16, stored as uint16_t bits. */
  FST_BF16 = 3, /**< bfloat16, stored as uint16_t bits. */
  FST_F64 = 4,  /**< IEEE binary64. */
  FST_I8 = 5,   /**< int8_t. */
  FST_I32 = 6,  /**< int32_t. */
  FST_I64 = 7,  /**< int64_t. */
  FST_U8 = 8,   /**< uint8_t. */
  FST_BOOL = 9  /**< One byte, 0 or 1 (any nonzero byte reads as true). */
} fst_dtype;

/** @brief Bytes per element of @p dtype; 0 for an unknown value. Never fails. Thread-safe. */
FST_API size_t fst_dtype_size(fst_dtype dtype);

/** @brief Name of @p dtype as in the text format ("f32", "bf16", ...); "?" if unknown. Thread-safe. */
FST_API const char* fst_dtype_name(fst_dtype dtype);

/** Largest tensor rank accepted anywhere in the API. */
#define FST_MAX_RANK 8
/** @} */

/* ------------------------------------------------------------------------ */
/** @name Context
 *  A context holds process-level configuration: backend choice, device, logging and the
 *  kernel cache directory. It is immutable after creation and thread-safe; graphs keep
 *  it alive, so it may be destroyed before them.
 *  @{ */

/** Where fused kernels run. */
typedef enum fst_backend {
  FST_BACKEND_AUTO = 0, /**< CUDA when a driver and a device exist, else host. */
  FST_BACKEND_CUDA = 1, /**< The CUDA driver API on a GPU. */
  FST_BACKEND_HOST = 2  /**< The generated CUDA C compiled for and run on the CPU. */
} fst_backend;

/** Severity of a log message; a context logs messages at or below its level. */
typedef enum fst_log_level {
  FST_LOG_OFF = 0,   /**< Nothing. */
  FST_LOG_ERROR = 1, /**< Failures. */
  FST_LOG_WARN = 2,  /**< Surprises that do not fail the call. */
  FST_LOG_INFO = 3,  /**< One line per major step (context, fusion, compile). */
  FST_LOG_DEBUG = 4, /**< Details of planning and compilation. */
  FST_LOG_TRACE = 5  /**< Everything. */
} fst_log_level;

/**
 * Receives log messages. @p message is valid only during the call. It may be called from
 * any thread that calls into fstitch, and from several at once.
 */
typedef void (*fst_log_callback)(void* user_data, fst_log_level level, const char* message);

/** Options for fst_context_create(). Not thread-safe: configure from one thread. */
typedef struct fst_context_options fst_context_options;
/** A context. Immutable and thread-safe. */
typedef struct fst_context fst_context;

/**
 * @brief Create options holding the defaults: backend auto, device 0, log level warn
 *        (or the level named by the environment variable FSTITCH_LOG), messages to
 *        stderr, cache directory from FSTITCH_CACHE_DIR or $XDG_CACHE_HOME/fstitch.
 * @param[out] out_options Receives the new options; release with fst_context_options_destroy().
 * @return ::FST_ERROR_INVALID_ARGUMENT if @p out_options is NULL; ::FST_ERROR_OUT_OF_MEMORY.
 */
FST_API fst_status fst_context_options_create(fst_context_options** out_options);

/** @brief Destroy options. Accepts NULL. */
FST_API void fst_context_options_destroy(fst_context_options* options);

/**
 * @brief Choose the backend.
 * @return ::FST_ERROR_INVALID_ARGUMENT for NULL @p options or a value outside ::fst_backend.
 */
FST_API fst_status fst_context_options_set_backend(fst_context_options* options, fst_backend backend);

/**
 * @brief Choose the CUDA device ordinal (ignored by the host backend).
 * @return ::FST_ERROR_INVALID_ARGUMENT for NULL @p options or a negative ordinal.
 */
FST_API fst_status fst_context_options_set_device(fst_context_options* options, int device_ordinal);

/**
 * @brief Set the log level. Overrides FSTITCH_LOG.
 * @return ::FST_ERROR_INVALID_ARGUMENT for NULL @p options or a value outside ::fst_log_level.
 */
FST_API fst_status fst_context_options_set_log_level(fst_context_options* options, fst_log_level level);

/**
 * @brief Send log messages to @p callback with @p user_data instead of stderr.
 *        A NULL @p callback restores stderr. @p user_data is not owned.
 * @return ::FST_ERROR_INVALID_ARGUMENT for NULL @p options.
 */
FST_API fst_status fst_context_options_set_log_callback(fst_context_options* options,
                                                        fst_log_callback callback, void* user_data);

/**
 * @brief Set the on-disk kernel cache directory (copied). "off" disables the disk cache;
 *        NULL restores the default. The directory and its "host" and "nvrtc" subfolders
 *        are used only when they are owned by the user and writable by no one else (missing
 *        ones are created with mode 0700), and entries only when they are regular files
 *        owned by the user; anything else is ignored with a warning through the log and the
 *        library works without it. A read-only cache is read. See "Cache trust" in
 *        docs/API.md.
 * @return ::FST_ERROR_INVALID_ARGUMENT for NULL @p options or an empty string.
 */
FST_API fst_status fst_context_options_set_cache_dir(fst_context_options* options, const char* path);

/**
 * @brief Create a context.
 *
 * The backend is settled here. ::FST_BACKEND_CUDA loads the CUDA driver (libcuda.so.1,
 * never linked; FSTITCH_CUDA_DRIVER names another file) and opens the device;
 * ::FST_BACKEND_AUTO does the same and falls back to the host backend when either is
 * missing, logging the choice and its reason at info level (fst_context_active_backend()).
 * @param options NULL for the defaults; not retained (may be destroyed right after).
 * @param[out] out_context Receives the context; release with fst_context_destroy().
 * @return ::FST_ERROR_INVALID_ARGUMENT if @p out_context is NULL; ::FST_ERROR_OUT_OF_MEMORY;
 *         for ::FST_BACKEND_CUDA, ::FST_ERROR_NO_DRIVER (no driver library, the toolkit's
 *         stub, or a driver older than CUDA 12.0) and ::FST_ERROR_NO_DEVICE (no GPU, an
 *         ordinal out of range, or a GPU older than sm_80), with the driver's own words.
 */
FST_API fst_status fst_context_create(const fst_context_options* options, fst_context** out_context);

/** @brief Release the caller's reference to a context. Accepts NULL. Graphs keep their own reference. */
FST_API void fst_context_destroy(fst_context* context);

/** @brief The backend requested when @p context was created. ::FST_ERROR_INVALID_ARGUMENT on NULL. */
FST_API fst_status fst_context_backend(const fst_context* context, fst_backend* out_backend);

/**
 * @brief The backend runs of @p context use: ::FST_BACKEND_CUDA or ::FST_BACKEND_HOST, never
 *        ::FST_BACKEND_AUTO (which is resolved when the context is created).
 * @return ::FST_ERROR_INVALID_ARGUMENT on NULL. Thread-safe.
 */
FST_API fst_status fst_context_active_backend(const fst_context* context, fst_backend* out_backend);

/**
 * @brief The compute capability of the context's device as 10 * major + minor (90 for an
 *        H100 or H200). Fusions target it unless fst_fuse_options_set_target_arch() says otherwise.
 * @return ::FST_ERROR_INVALID_ARGUMENT on NULL; ::FST_ERROR_NO_DEVICE when the context runs on
 *         the host backend. Thread-safe.
 */
FST_API fst_status fst_context_device_arch(const fst_context* context, int* out_sm);

/** @brief The log level in force for @p context. ::FST_ERROR_INVALID_ARGUMENT on NULL. */
FST_API fst_status fst_context_log_level(const fst_context* context, fst_log_level* out_level);

/**
 * @brief The disk cache directory in force, or "off".
 * @param[out] out_path Receives a string owned by @p context, valid while it lives.
 * @return ::FST_ERROR_INVALID_ARGUMENT on NULL.
 */
FST_API fst_status fst_context_cache_dir(const fst_context* context, const char** out_path);

/**
 * What kernel compilation did, counted per context (fst_context_compile_stat()) and per fusion
 * (fst_fusion_compile_stat()). A module is what one compile produces: with NVRTC, one kernel
 * (compiled at the first PTX, CUBIN or CUDA run of a fusion); on the host backend, all the
 * kernels of one fusion (compiled at its first run).
 */
typedef enum fst_compile_stat {
  FST_COMPILE_STAT_COMPILED = 0,           /**< Modules compiled. */
  FST_COMPILE_STAT_MEMORY_HITS = 1,        /**< NVRTC modules found in the context's memory: an
                                                earlier fusion had the same kernel. */
  FST_COMPILE_STAT_DISK_HITS = 2,          /**< Modules loaded from the disk cache. */
  FST_COMPILE_STAT_DISK_WRITES = 3,        /**< Modules written to the disk cache. */
  FST_COMPILE_STAT_DISK_DISCARDS = 4,      /**< Corrupt or unloadable disk entries removed. */
  FST_COMPILE_STAT_COMPILE_NANOSECONDS = 5 /**< Wall time of the compiles, summed over those
                                                that ran in parallel. */
} fst_compile_stat;

/**
 * @brief What the compiles of every fusion made from graphs of @p context did since the
 *        context was created: one counter of ::fst_compile_stat.
 * @return ::FST_ERROR_INVALID_ARGUMENT on NULL or a value outside ::fst_compile_stat;
 *         @p out_value is untouched then. Thread-safe (a count read while another thread
 *         compiles may or may not include that compile).
 */
FST_API fst_status fst_context_compile_stat(const fst_context* context, fst_compile_stat stat,
                                            uint64_t* out_value);

/**
 * @brief Emit a message through the context's logger (the same path fstitch itself uses).
 * @return ::FST_ERROR_INVALID_ARGUMENT on NULL arguments or a level that is not a message level
 *         (::FST_LOG_OFF, or a value outside ::fst_log_level).
 */
FST_API fst_status fst_context_log(const fst_context* context, fst_log_level level, const char* message);
/** @} */

/* ------------------------------------------------------------------------ */
/** @name Graph
 *  A graph of SSA values, each with a dtype and a shape. A graph is not thread-safe while it
 *  is being built; once built, concurrent read-only calls (queries, print, verify, evaluate)
 *  are safe.
 *  @{ */

/** A graph. Needs external synchronization for building; read-only calls may run concurrently. */
typedef struct fst_graph fst_graph;

/**
 * A value in a graph. It identifies both the graph and the value, so a value used with
 * another graph is detected and rejected. Plain data: copy it freely.
 */
typedef uint64_t fst_value;

/** Returned by a builder that failed. */
#define FST_VALUE_INVALID UINT64_C(0)

/**
 * @brief Create an empty graph.
 * @param context The context; the graph holds a reference to it.
 * @param[out] out_graph Receives the graph; release with fst_graph_destroy().
 * @return ::FST_ERROR_INVALID_ARGUMENT on NULL arguments; ::FST_ERROR_OUT_OF_MEMORY.
 */
FST_API fst_status fst_graph_create(fst_context* context, fst_graph** out_graph);

/** @brief Destroy a graph and everything it owns. Accepts NULL. Values of it become invalid. */
FST_API void fst_graph_destroy(fst_graph* graph);

/**
 * @brief The graph's error state: ::FST_OK, or the status of the first builder that failed.
 * @param graph NULL yields ::FST_ERROR_INVALID_ARGUMENT.
 */
FST_API fst_status fst_graph_status(const fst_graph* graph);

/**
 * @brief The message of the first builder error, "" if none.
 * @return Owned by @p graph, valid while it lives; "" for NULL.
 */
FST_API const char* fst_graph_error_message(const fst_graph* graph);

/**
 * @brief Check the graph's invariants: no builder error, at least one output, operand
 *        order, inferred dtypes and shapes, unique names.
 * @return ::FST_OK or the status describing the first violation.
 */
FST_API fst_status fst_graph_verify(const fst_graph* graph);
/** @} */

/* ------------------------------------------------------------------------ */
/** @name Graph builders
 *  Each returns the new value, or ::FST_VALUE_INVALID after recording an error on the graph
 *  (see the conventions at the top). All dims are int64_t, row-major, at most ::FST_MAX_RANK.
 *  Every dim must be at least 1: a negative dim is a shape error, a dim of 0 is
 *  ::FST_ERROR_UNSUPPORTED (empty tensors are not supported). Every value is at most 2^62
 *  bytes (element count times fst_dtype_size()): a builder whose result would be larger,
 *  whatever its element count, fails with ::FST_ERROR_SHAPE (docs/API.md, "Size limits").
 *  @{ */

/**
 * @brief Declare a graph input.
 * @param name Unique, non-empty input name (copied).
 * @param rank 0..::FST_MAX_RANK; @p dims may be NULL when @p rank is 0.
 * Errors: invalid argument (NULL/empty/duplicate name, unknown dtype), shape (rank too
 * large, dims < 1, more than 2^62 bytes).
 */
FST_API fst_value fst_input(fst_graph* graph, const char* name, fst_dtype dtype, size_t rank,
                            const int64_t* dims);

/**
 * @brief A scalar (rank 0) constant given as a double, converted to @p dtype as by fst_cast().
 * Errors: invalid argument (unknown dtype).
 */
FST_API fst_value fst_constant_f64(fst_graph* graph, fst_dtype dtype, double value);

/**
 * @brief A scalar (rank 0) constant given as an int64_t, converted to @p dtype as by fst_cast().
 * Errors: invalid argument (unknown dtype).
 */
FST_API fst_value fst_constant_i64(fst_graph* graph, fst_dtype dtype, int64_t value);

/**
 * @brief A constant tensor of any shape from host data (rotary tables, position ids, masks):
 *        planned like any other value, so it need not be a graph input.
 * @param rank 0..::FST_MAX_RANK; @p dims may be NULL when @p rank is 0.
 * @param data The elements, dense row-major in the storage format of @p dtype (f16 and bf16
 *        as their 16-bit patterns, bool as one byte 0 or 1), copied before the call returns:
 *        the caller keeps ownership. Graphs copied from this one, and fusions made from it,
 *        share the copy.
 * @param bytes Must equal the element count times fst_dtype_size(@p dtype).
 * Errors: invalid argument (unknown dtype, NULL @p data, @p bytes not the tensor's size, a
 * bool byte other than 0 or 1, naming the first), shape (rank too large, dims < 1, more than
 * 2^62 bytes), out of memory. Thread safety as for every builder: one thread per graph.
 */
FST_API fst_value fst_constant_tensor(fst_graph* graph, fst_dtype dtype, size_t rank, const int64_t* dims,
                                      const void* data, size_t bytes);

/** Unary elementwise operations. */
typedef enum fst_unary_op {
  FST_UNARY_NEG = 1,         /**< -x (wraps for integers). Not bool. */
  FST_UNARY_ABS = 2,         /**< |x| (wraps for the most negative integer). Not bool. */
  FST_UNARY_EXP = 3,         /**< e^x. Floating point only. */
  FST_UNARY_LOG = 4,         /**< Natural logarithm. Floating point only. */
  FST_UNARY_SQRT = 5,        /**< Square root. Floating point only. */
  FST_UNARY_RSQRT = 6,       /**< 1 / sqrt(x). Floating point only. */
  FST_UNARY_RECIPROCAL = 7,  /**< 1 / x. Floating point only. */
  FST_UNARY_TANH = 8,        /**< Hyperbolic tangent. Floating point only. */
  FST_UNARY_SIGMOID = 9,     /**< 1 / (1 + e^-x). Floating point only. */
  FST_UNARY_RELU = 10,       /**< max(x, 0); NaN stays NaN. Not bool. */
  FST_UNARY_GELU = 11,       /**< x * 0.5 * (1 + erf(x / sqrt 2)). Floating point only. */
  FST_UNARY_GELU_TANH = 12,  /**< x * 0.5 * (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))). Floating point only. */
  FST_UNARY_SILU = 13,       /**< x * sigmoid(x). Floating point only. */
  FST_UNARY_ERF = 14,        /**< Error function. Floating point only. */
  FST_UNARY_SIN = 15,        /**< Sine. Floating point only. */
  FST_UNARY_COS = 16,        /**< Cosine. Floating point only. */
  FST_UNARY_FLOOR = 17,      /**< Round toward -inf. Floating point only. */
  FST_UNARY_CEIL = 18,       /**< Round toward +inf. Floating point only. */
  FST_UNARY_ROUND = 19,      /**< Round half to even. Floating point only. */
  FST_UNARY_SIGN = 20,       /**< -1, 0 or 1 (NaN stays NaN). Not bool. */
  FST_UNARY_LOGICAL_NOT = 21 /**< x == 0, as bool. Any dtype. */
} fst_unary_op;

/**
 * @brief Apply a unary elementwise operation. The result has @p x's shape, and its dtype
 *        except for ::FST_UNARY_LOGICAL_NOT (bool).
 * Errors: invalid argument (unknown op, invalid or foreign value), dtype (see each op).
 */
FST_API fst_value fst_unary(fst_graph* graph, fst_unary_op op, fst_value x);

/** Binary elementwise operations. Operands must have the same dtype (use fst_cast()). */
typedef enum fst_binary_op {
  FST_BINARY_ADD = 1,          /**< a + b (wraps for integers). Not bool. */
  FST_BINARY_SUB = 2,          /**< a - b (wraps for integers). Not bool. */
  FST_BINARY_MUL = 3,          /**< a * b (wraps for integers). Not bool. */
  FST_BINARY_DIV = 4,          /**< a / b; integers truncate toward zero and x / 0 is 0. Not bool. */
  FST_BINARY_POW = 5,          /**< a ^ b. Floating point only. */
  FST_BINARY_MAX = 6,          /**< Larger of a and b; NaN if either is NaN. */
  FST_BINARY_MIN = 7,          /**< Smaller of a and b; NaN if either is NaN. */
  FST_BINARY_EQ = 8,           /**< a == b, as bool. */
  FST_BINARY_NE = 9,           /**< a != b, as bool. */
  FST_BINARY_LT = 10,          /**< a < b, as bool. */
  FST_BINARY_LE = 11,          /**< a <= b, as bool. */
  FST_BINARY_GT = 12,          /**< a > b, as bool. */
  FST_BINARY_GE = 13,          /**< a >= b, as bool. */
  FST_BINARY_LOGICAL_AND = 14, /**< a != 0 && b != 0, as bool. */
  FST_BINARY_LOGICAL_OR = 15   /**< a != 0 || b != 0, as bool. */
} fst_binary_op;

/**
 * @brief Apply a binary elementwise operation with numpy broadcasting: shapes are aligned
 *        at the right and a dim of 1 stretches; the graph gets explicit broadcast values.
 * Errors: invalid argument (unknown op, invalid or foreign value), dtype (operand dtypes
 * differ or are not accepted), shape (not broadcastable).
 */
FST_API fst_value fst_binary(fst_graph* graph, fst_binary_op op, fst_value a, fst_value b);

/**
 * @brief cond ? a : b elementwise, with numpy broadcasting of all three.
 * Errors: dtype (@p cond not bool, @p a and @p b differ), shape (not broadcastable).
 */
FST_API fst_value fst_select(fst_graph* graph, fst_value cond, fst_value a, fst_value b);

/**
 * @brief Convert to @p dtype. Float to integer truncates toward zero and saturates (NaN
 *        gives 0); integer to narrower integer wraps; to bool is x != 0; to f16/bf16 rounds
 *        to nearest even.
 * Errors: invalid argument (unknown dtype, invalid value).
 */
FST_API fst_value fst_cast(fst_graph* graph, fst_value x, fst_dtype dtype);

/**
 * @brief Broadcast @p x to the shape @p dims by numpy rules (align right, 1 stretches).
 * Errors: shape (rank smaller than x's, dims that neither match nor stretch, bad dims).
 */
FST_API fst_value fst_broadcast(fst_graph* graph, fst_value x, size_t rank, const int64_t* dims);

/** Reductions. */
typedef enum fst_reduce_op {
  FST_REDUCE_SUM = 1,  /**< Sum; accumulated in f64 (floats) or int64 (integers, then wrapped). Not bool. */
  FST_REDUCE_MEAN = 2, /**< Arithmetic mean. Floating point only. */
  FST_REDUCE_MAX = 3,  /**< Maximum; NaN if any element is NaN. */
  FST_REDUCE_MIN = 4,  /**< Minimum; NaN if any element is NaN. */
  FST_REDUCE_PROD = 5  /**< Product. Not bool. */
} fst_reduce_op;

/**
 * @brief Reduce over a set of axes.
 * @param axes @p naxes distinct axes in -rank..rank-1 (negative counts from the end); at least one.
 * @param keepdims Nonzero keeps reduced axes as dims of 1.
 * Errors: invalid argument (unknown op, NULL axes), shape (no axes, out of range, repeated,
 * rank 0 input), dtype (see each op).
 */
FST_API fst_value fst_reduce(fst_graph* graph, fst_reduce_op op, fst_value x, size_t naxes,
                             const int64_t* axes, int keepdims);

/**
 * @brief Reinterpret the row-major elements with new dims. One dim may be -1 (inferred).
 * Errors: shape (element counts differ, more than one -1, dims < 1 otherwise).
 */
FST_API fst_value fst_reshape(fst_graph* graph, fst_value x, size_t rank, const int64_t* dims);

/**
 * @brief Permute axes: result dim i is x's dim perm[i].
 * Errors: shape (@p rank differs from x's, @p perm not a permutation of 0..rank-1).
 */
FST_API fst_value fst_permute(fst_graph* graph, fst_value x, size_t rank, const int64_t* perm);

/**
 * @brief A tensor whose elements are their index along @p axis.
 * Errors: invalid argument (unknown dtype), dtype (bool), shape (axis out of range, bad dims).
 */
FST_API fst_value fst_iota(fst_graph* graph, fst_dtype dtype, size_t rank, const int64_t* dims, int64_t axis);

/**
 * @brief An operation fstitch does not fuse (a matmul, a convolution...): the planner
 *        partitions the graph around it. Its output dtype and shape are declared.
 * @param name What the operation is (copied), e.g. "matmul"; letters, digits, '_', '.', '-'.
 * @param inputs @p ninputs values (may be NULL when @p ninputs is 0).
 * The reference evaluator cannot run it: evaluating such a graph is ::FST_ERROR_UNSUPPORTED.
 * Errors: invalid argument (bad name, NULL inputs, unknown dtype, invalid values), shape.
 */
FST_API fst_value fst_opaque(fst_graph* graph, const char* name, size_t ninputs, const fst_value* inputs,
                             fst_dtype dtype, size_t rank, const int64_t* dims);

/**
 * @brief A strided slice: along each axis the elements start, start + step, ... below stop.
 * @param rank x's rank; @p starts, @p stops (and @p steps unless NULL) have @p rank entries
 *        (any of them may be NULL when @p rank is 0).
 * @param starts, stops Python-style bounds: a negative bound counts from the end (adds the
 *        dim), then each is clamped to 0..dim.
 * @param steps At least 1 each; NULL means all 1.
 * Result dim: ceil((stop - start) / step). An empty slice (stop <= start after clamping) is
 * a shape error, as fstitch has no empty tensors.
 * Errors: invalid argument (NULL arrays, invalid value), shape (@p rank differs from x's,
 * step < 1, empty slice).
 */
FST_API fst_value fst_slice(fst_graph* graph, fst_value x, size_t rank, const int64_t* starts,
                            const int64_t* stops, const int64_t* steps);

/**
 * @brief Concatenate @p n values along @p axis (-rank..rank-1, negative counts from the end).
 * @param values @p n >= 1 values of one dtype and rank whose dims agree except along @p axis.
 * Errors: invalid argument (@p n is 0, NULL @p values, invalid values), dtype (dtypes
 * differ), shape (rank 0, axis out of range, other dims differ).
 */
FST_API fst_value fst_concat(fst_graph* graph, size_t n, const fst_value* values, int64_t axis);

/**
 * @brief Pad with a constant: @p low[i] elements before and @p high[i] after axis i.
 * @param rank x's rank; @p low and @p high have @p rank entries (NULL when @p rank is 0).
 * @param low, high At least 0 each: negative pads are a shape error (remove elements with
 *        fst_slice()).
 * @param value The pad value, converted to x's dtype as by fst_cast().
 * Errors: invalid argument (NULL arrays, invalid value), shape (@p rank differs from x's,
 * negative pads, a result over the size limit).
 */
FST_API fst_value fst_pad(fst_graph* graph, fst_value x, size_t rank, const int64_t* low,
                          const int64_t* high, double value);

/**
 * @brief Gather along an axis: result[..., j..., ...] = x[..., indices[j...], ...].
 * Result dims: x's dims before @p axis, then @p indices' dims, then x's dims after @p axis.
 * An index i with -n <= i < n (n = x's dim along @p axis) selects element i, counted from
 * the end when negative, as in Python; any other index yields 0 (false for bool). No index
 * ever reads outside x, in the reference evaluator and in the generated kernels alike.
 * @param indices An ::FST_I32 or ::FST_I64 value of any shape (rank 0 removes the axis).
 * @param axis -rank..rank-1 of x (negative counts from the end).
 * Errors: invalid argument (invalid values), dtype (indices not i32 or i64), shape (x of
 * rank 0, axis out of range, result rank above ::FST_MAX_RANK).
 */
FST_API fst_value fst_take(fst_graph* graph, fst_value x, fst_value indices, int64_t axis);

/**
 * @brief Split @p x along @p axis into @p nsections consecutive slices (fst_slice() values).
 * @param sizes @p nsections sizes, each at least 1, adding up to x's dim along @p axis.
 * @param out_values Receives the @p nsections values, in order; untouched on failure.
 * @return ::FST_OK, or the error (which is also recorded on the graph like a builder's).
 * Errors: invalid argument (NULL @p sizes or @p out_values, @p nsections is 0, invalid value),
 * shape (axis out of range, a size below 1, sizes not adding up to the dim).
 */
FST_API fst_status fst_split(fst_graph* graph, fst_value x, int64_t axis, size_t nsections,
                             const int64_t* sizes, fst_value* out_values);

/**
 * @brief Name @p value as a graph output. One value may be several outputs; an input may
 *        be an output.
 * @param name Unique, non-empty output name (copied).
 * @return ::FST_OK, or the error (which is also recorded on the graph like a builder's).
 */
FST_API fst_status fst_output(fst_graph* graph, const char* name, fst_value value);
/** @} */

/* ------------------------------------------------------------------------ */
/** @name Graph queries
 *  Read-only; safe to call concurrently once the graph is no longer being built.
 *  @{ */

/** @brief Element type of @p value. Errors: invalid argument (NULL, invalid or foreign value). */
FST_API fst_status fst_value_dtype(const fst_graph* graph, fst_value value, fst_dtype* out_dtype);

/** @brief Rank of @p value. Errors: invalid argument (NULL, invalid or foreign value). */
FST_API fst_status fst_value_rank(const fst_graph* graph, fst_value value, size_t* out_rank);

/**
 * @brief Dims of @p value, written to @p out_dims which holds @p capacity elements.
 * Errors: invalid argument (NULL, invalid or foreign value, @p capacity below the rank).
 */
FST_API fst_status fst_value_dims(const fst_graph* graph, fst_value value, size_t capacity,
                                  int64_t* out_dims);

/** @brief Number of graph inputs. Errors: invalid argument (NULL). */
FST_API fst_status fst_graph_input_count(const fst_graph* graph, size_t* out_count);

/**
 * @brief The @p index -th input in declaration order, and its name.
 * @param[out] out_name May be NULL; receives a string owned by the graph.
 * Errors: invalid argument (NULL graph or value pointer, index out of range).
 */
FST_API fst_status fst_graph_input(const fst_graph* graph, size_t index, fst_value* out_value,
                                   const char** out_name);

/** @brief Number of graph outputs. Errors: invalid argument (NULL). */
FST_API fst_status fst_graph_output_count(const fst_graph* graph, size_t* out_count);

/**
 * @brief The @p index -th output in declaration order, and its name.
 * @param[out] out_name May be NULL; receives a string owned by the graph.
 * Errors: invalid argument (NULL graph or value pointer, index out of range).
 */
FST_API fst_status fst_graph_output(const fst_graph* graph, size_t index, fst_value* out_value,
                                    const char** out_name);

/** @brief Number of values (operations) in the graph. Errors: invalid argument (NULL). */
FST_API fst_status fst_graph_value_count(const fst_graph* graph, size_t* out_count);
/** @} */

/* ------------------------------------------------------------------------ */
/** @name Text format
 *  A line-oriented text form of a graph; parse(print(g)) prints identically. See docs/text-format.md.
 *  @{ */

/**
 * @brief Print @p graph as text.
 * @param[out] out_text Receives a NUL-terminated string allocated by the library; release
 *             it with fst_string_free().
 * Errors: invalid argument (NULL), the graph's builder error.
 */
FST_API fst_status fst_graph_print(const fst_graph* graph, char** out_text);

/**
 * @brief Parse graph text into a new graph.
 * @param length Bytes of @p text; pass (size_t)-1 for a NUL-terminated string.
 * @param[out] out_graph Receives the graph; release with fst_graph_destroy().
 * Errors: invalid argument (NULL), parse (syntax, with line:column), shape/dtype (an
 * operation that does not type-check, also with line:column).
 */
FST_API fst_status fst_graph_parse(fst_context* context, const char* text, size_t length,
                                   fst_graph** out_graph);

/** @brief Free a string returned by fstitch. Accepts NULL. */
FST_API void fst_string_free(char* text);
/** @} */

/* ------------------------------------------------------------------------ */
/** @name Reference evaluator
 *  @{ */

/**
 * @brief Run @p graph on the host with the reference evaluator: every operation computed
 *        in float64 (integers in int64) and rounded to its dtype (f16/bf16 round to
 *        nearest even); reductions accumulate in float64.
 * @param inputs @p ninputs pointers to dense row-major host buffers, in input order.
 * @param outputs @p noutputs pointers to dense row-major host buffers, in output order.
 * Errors: invalid argument (NULL pointers, counts that differ from the graph's), the
 * graph's builder error or verification failure, unsupported (opaque operations),
 * out of memory (also before any work, when the intermediates alive at once, 8 bytes per
 * element, would exceed the machine's physical memory). Thread-safe for concurrent calls
 * on one graph.
 */
FST_API fst_status fst_graph_evaluate_reference(const fst_graph* graph, const void* const* inputs,
                                                size_t ninputs, void* const* outputs, size_t noutputs);
/** @} */

/* ------------------------------------------------------------------------ */
/** @name Fusion
 *  fst_fuse() plans a verified graph into fused kernels and generates their CUDA C. The
 *  resulting ::fst_fusion is immutable: queries and runs are thread-safe.
 *  @{ */

/** How aggressively to fuse. */
typedef enum fst_fusion_policy {
  FST_POLICY_STITCH = 0, /**< FusionStitching: reductions and their consumers share kernels (default). */
  FST_POLICY_LOOP =
      1, /**< XLA-style loop/input fusion: elementwise into consumers; each reduction ends a kernel. */
  FST_POLICY_NONE = 2 /**< One kernel per operation (constants are inlined into their users). */
} fst_fusion_policy;

/** Options for fst_fuse(). Not thread-safe: configure from one thread. */
typedef struct fst_fuse_options fst_fuse_options;
/** A fused plan with its kernels. Immutable and thread-safe. */
typedef struct fst_fusion fst_fusion;
/** One kernel of a fusion, owned by it. Immutable and thread-safe. */
typedef struct fst_kernel fst_kernel;

/**
 * @brief Create fuse options with the defaults: policy stitch, target architecture sm_90
 *        (or the context's device when it has one), shared-memory budget 227 KiB per block
 *        (capped by the target's per-block limit: 227 KiB on sm_90, 163 KiB on sm_80),
 *        register cap 64 per thread.
 * @return ::FST_ERROR_INVALID_ARGUMENT on NULL; ::FST_ERROR_OUT_OF_MEMORY.
 */
FST_API fst_status fst_fuse_options_create(fst_fuse_options** out_options);

/** @brief Destroy fuse options. Accepts NULL. */
FST_API void fst_fuse_options_destroy(fst_fuse_options* options);

/** @brief Choose the policy. ::FST_ERROR_INVALID_ARGUMENT for NULL or an unknown policy. */
FST_API fst_status fst_fuse_options_set_policy(fst_fuse_options* options, fst_fusion_policy policy);

/**
 * @brief Choose the target architecture as 10 * major + minor: 80 (A100) or 90 (H100/H200).
 * @return ::FST_ERROR_INVALID_ARGUMENT for NULL; ::FST_ERROR_UNSUPPORTED for other architectures.
 */
FST_API fst_status fst_fuse_options_set_target_arch(fst_fuse_options* options, int sm);

/**
 * @brief Shared memory a kernel may use per block, in bytes (1 KiB .. 227 KiB), a cap on the
 *        row caches the planner keeps on chip; past 48 KiB a kernel uses dynamic shared memory
 *        (fst_kernel_launch_config() says how much; the CUDA backend opts the kernel in).
 * @return ::FST_ERROR_INVALID_ARGUMENT for NULL or a value out of range.
 */
FST_API fst_status fst_fuse_options_set_shared_memory_budget(fst_fuse_options* options, size_t bytes);

/**
 * @brief Registers per thread the planner may plan for (32 .. 255).
 * @return ::FST_ERROR_INVALID_ARGUMENT for NULL or a value out of range.
 */
FST_API fst_status fst_fuse_options_set_register_cap(fst_fuse_options* options, int registers);

/**
 * @brief Plan for a named device model: "a100" (sm_80), "h100" or "h200" (sm_90). Sets the
 *        target architecture too. The cost model then uses that device's memory bandwidth,
 *        SM count and limits. Without a model, a fusion made in a context with a CUDA device
 *        uses what that device reports (SMs, memory clock and bus width, limits); otherwise the
 *        target's defaults (sm_80: A100, sm_90: H100). The choice changes schedules and launch
 *        sizes, never results beyond floating-point reassociation within a reduction.
 * @return ::FST_ERROR_INVALID_ARGUMENT for NULL arguments; ::FST_ERROR_UNSUPPORTED for an
 *         unknown model (the message lists the known ones). @p options is unchanged on error.
 */
FST_API fst_status fst_fuse_options_set_device_model(fst_fuse_options* options, const char* model);

/**
 * @brief Plan @p graph into fused kernels and generate their source.
 *
 * Compilation happens when a kernel's PTX or binary is first needed (a run, or
 * fst_kernel_ptx()), so fusing works on machines without CUDA.
 * @param options NULL for the defaults; not retained.
 * @param[out] out_fusion Receives the fusion; release with fst_fusion_destroy(). It keeps the
 *             graph's context alive and does not refer to the graph afterwards.
 * Errors: invalid argument (NULL), the graph's builder error or verification failure,
 * out of memory (also when the workspace would exceed 2^62 bytes or the plan's global
 * traffic 2^64 bytes). Thread-safe for concurrent calls on one graph.
 */
FST_API fst_status fst_fuse(const fst_graph* graph, const fst_fuse_options* options, fst_fusion** out_fusion);

/** @brief Destroy a fusion and its kernels. Accepts NULL. */
FST_API void fst_fusion_destroy(fst_fusion* fusion);

/**
 * @brief Number of kernels, in launch order. Errors: invalid argument (NULL).
 *
 * A kernel is one launch. Independent fused kernels may share one (a packed launch: each runs
 * on its own range of the launch's blocks, with a grid the launch keeps whatever the
 * occupancy); fst_fusion_dump() lists the parts of each.
 */
FST_API fst_status fst_fusion_kernel_count(const fst_fusion* fusion, size_t* out_count);

/**
 * @brief The @p index -th kernel in launch order; owned by @p fusion.
 * Errors: invalid argument (NULL, index out of range).
 */
FST_API fst_status fst_fusion_kernel(const fst_fusion* fusion, size_t index, const fst_kernel** out_kernel);

/** @brief Bytes of workspace fst_fusion_run() needs (intermediates between kernels). */
FST_API fst_status fst_fusion_workspace_size(const fst_fusion* fusion, size_t* out_bytes);

/**
 * @brief What compiling this fusion's modules did so far: one counter of ::fst_compile_stat.
 *        Nothing is compiled by fst_fuse(); a fusion's first PTX or CUBIN request or run
 *        compiles its kernels or finds them (in the context's memory or on disk), so a
 *        framework can report what its first call cost: e.g. 3 compiled in 1.2 s, or 3 from
 *        the disk cache.
 * @return ::FST_ERROR_INVALID_ARGUMENT on NULL or a value outside ::fst_compile_stat;
 *         @p out_value is untouched then. Thread-safe.
 */
FST_API fst_status fst_fusion_compile_stat(const fst_fusion* fusion, fst_compile_stat stat,
                                           uint64_t* out_value);

/**
 * @brief Global-memory bytes the plan moves, and the lower bound (each graph input read
 *        once, each output written once). Errors: invalid argument (NULL).
 *
 * Both count fstitch's kernels only, never the opaque operations the caller runs: the bound
 * is what the fused regions around them must move at least, each input and opaque result
 * they use read once, each output and each value an opaque operation reads written once.
 * So the planned bytes are never below the bound, with opaque operations or without.
 */
FST_API fst_status fst_fusion_planned_bytes(const fst_fusion* fusion, uint64_t* out_planned_bytes,
                                            uint64_t* out_lower_bound_bytes);

/**
 * @brief A human-readable description of the plan: kernels in order, their operations,
 *        schedule, stitch scheme of each internal edge, inputs, outputs, workspace buffers,
 *        estimated bytes and time, and the reason for each boundary between kernels.
 * @param[out] out_text Free with fst_string_free().
 */
FST_API fst_status fst_fusion_dump(const fst_fusion* fusion, char** out_text);

/**
 * @brief Run every kernel of the plan in order on the context's backend.
 *
 * On the CUDA backend the kernels run in the calling thread's current CUDA context, or in
 * the device's primary context when none is current. The first run loads the kernels (and
 * compiles them with NVRTC if no PTX or CUBIN was requested before); later runs only queue
 * launches: no host synchronization, so a run can be captured into a CUDA graph, and
 * several threads may run the same fusion at once. A NULL @p workspace is allocated and
 * freed in stream order (cuMemAllocAsync / cuMemFreeAsync). On the host backend the first
 * run compiles the plan with the host C++ compiler (a large plan as several translation
 * units in parallel); a compiler process that runs longer than FSTITCH_HOST_COMPILE_TIMEOUT
 * seconds (default 600) is killed with everything it started, and the run fails with
 * ::FST_ERROR_COMPILE.
 * @param inputs Graph inputs in input order; device pointers for the CUDA backend, host
 *        pointers for the host backend.
 * @param outputs Graph outputs in output order, same kind of pointers.
 * @param workspace At least fst_fusion_workspace_size() bytes, or NULL to let fstitch
 *        allocate it for the run.
 * @param stream A CUstream for the CUDA backend (NULL: the default stream); ignored by the
 *        host backend, which runs synchronously.
 *
 * Aliasing: inputs may overlap each other; outputs overlap no other output, the workspace
 * overlaps no buffer, and an output overlaps an input only exactly (same address, same
 * byte size) and only where the plan can update that input in place: the kernel writing
 * the output reads the input only at the element each thread stores, through elementwise
 * operations (no broadcast, permute or reduction of it), and no later kernel or opaque
 * operation reads it (docs/API.md, "Buffer aliasing"). Every call checks the byte ranges
 * (O(n log n) in the number of buffers) and refuses any other overlap with
 * ::FST_ERROR_INVALID_ARGUMENT naming both buffers, before anything runs.
 * Errors: invalid argument (NULL, wrong counts, overlapping buffers), no compiler, compile,
 * launch (with the driver's error name and text), out of memory, unsupported (the plan
 * contains opaque operations: run it with fst_fusion_run_with_opaque(), or follow its
 * steps). Thread-safe.
 */
FST_API fst_status fst_fusion_run(const fst_fusion* fusion, const void* const* inputs, size_t ninputs,
                                  void* const* outputs, size_t noutputs, void* workspace, void* stream);

/** What a kernel parameter points to. */
typedef enum fst_param_kind {
  FST_PARAM_INPUT = 1,     /**< A graph input; the index is its input index. */
  FST_PARAM_OUTPUT = 2,    /**< A graph output; the index is its output index. */
  FST_PARAM_WORKSPACE = 3, /**< An intermediate in the workspace; the index is its byte offset. */
  /** A tensor constant (fst_constant_tensor()) in memory the fusion owns; the index is the
      constant's index (fst_fusion_constant()). */
  FST_PARAM_CONSTANT = 4
} fst_param_kind;

/** @brief The kernel's entry-point name in its source. @p out_name is owned by the fusion. */
FST_API fst_status fst_kernel_name(const fst_kernel* kernel, const char** out_name);

/**
 * @brief The CUDA C source of this kernel: fstitch's prelude and the kernel's definition, a
 *        complete NVRTC program. @p out_source is owned by the fusion.
 */
FST_API fst_status fst_kernel_source(const fst_kernel* kernel, const char** out_source);

/**
 * @brief The kernel's PTX for the fusion's target. The first PTX or CUBIN request of a fusion
 *        compiles all its kernels with NVRTC, in parallel (cached in memory and on disk).
 * Errors: no compiler (no NVRTC), compile. @p out_ptx is owned by the fusion.
 */
FST_API fst_status fst_kernel_ptx(const fst_kernel* kernel, const char** out_ptx);

/**
 * @brief The kernel's CUBIN for the fusion's target, compiled as for fst_kernel_ptx().
 * Errors: no compiler, compile. @p out_data is owned by the fusion.
 */
FST_API fst_status fst_kernel_cubin(const fst_kernel* kernel, const void** out_data, size_t* out_size);

/**
 * @brief The planned launch configuration: grid and block dimensions (x, y, z; y and z are 1)
 *        and the dynamic shared memory bytes.
 *
 * The grid is the one the planner sized from its estimate of the kernel's occupancy (resident
 * blocks per multiprocessor from estimated registers, shared memory and threads) on the
 * device the fusion was planned for: one wave of resident blocks, or the kernel's work units
 * when there are fewer. That estimate is conservative, so the compiled kernel often fits more
 * blocks. Any grid fst_kernel_grid_for_occupancy() returns is correct for the kernel; fstitch's
 * own CUDA launcher (fst_fusion_run(), fst_kernel_launch()) launches the grid that function
 * gives at the occupancy the driver reports for the compiled kernel
 * (cuOccupancyMaxActiveBlocksPerMultiprocessor with this block size and dynamic shared memory),
 * so its grid may differ from the one reported here. The block size and the dynamic shared
 * memory never change. The host backend launches the planned grid.
 * Errors: invalid argument (NULL). Thread-safe. The outputs are untouched on failure.
 */
FST_API fst_status fst_kernel_launch_config(const fst_kernel* kernel, uint32_t out_grid[3],
                                            uint32_t out_block[3], size_t* out_dynamic_shared_bytes);

/**
 * @brief The grid to launch @p kernel with when @p blocks_per_multiprocessor of its blocks are
 *        resident on each of @p multiprocessors multiprocessors: the rule fstitch's own CUDA
 *        launcher applies, for frameworks that launch the CUBIN or the kernel function
 *        themselves.
 *
 * For a framework with the kernel loaded, @p blocks_per_multiprocessor is what
 * cuOccupancyMaxActiveBlocksPerMultiprocessor() reports for the function with the block size
 * and dynamic shared memory of fst_kernel_launch_config(), and @p multiprocessors the device's
 * CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT. The grid is one full wave
 * (@p blocks_per_multiprocessor x @p multiprocessors), or the kernel's work units when there
 * are fewer (more blocks would have nothing to do), never below one block. A kernel whose code
 * assumes its planned grid keeps it, and a ::FST_LAUNCH_COOPERATIVE kernel never grows past
 * its planned grid (it only shrinks, so every block stays resident), except a kernel with
 * column totals whose plan gives a larger grid its workspace holds (fst_fusion_dump: "up to N
 * blocks where the compiled kernel fits them"): it grows to the full wave, up to that grid,
 * when more blocks are resident than planned. Block size and dynamic
 * shared memory are those of fst_kernel_launch_config(). Arithmetic on the plan: it needs no
 * device or driver and answers on either backend; it allocates nothing.
 *
 * @param[out] out_grid The grid (x, y, z; y and z are 1); untouched on failure.
 * @return ::FST_ERROR_INVALID_ARGUMENT for NULL, for 0 blocks per multiprocessor (not one
 *         block of the kernel fits: it cannot launch) and for 0 multiprocessors;
 *         ::FST_ERROR_UNSUPPORTED when the grid would exceed CUDA's 2^31 - 1 blocks.
 *         Thread-safe.
 */
FST_API fst_status fst_kernel_grid_for_occupancy(const fst_kernel* kernel, uint32_t blocks_per_multiprocessor,
                                                 uint32_t multiprocessors, uint32_t out_grid[3]);

/** @brief Number of pointer parameters. */
FST_API fst_status fst_kernel_param_count(const fst_kernel* kernel, size_t* out_count);

/**
 * @brief What the @p index -th parameter points to.
 * @param[out] out_value May be NULL; the graph value behind the parameter (valid for the graph
 *             the fusion was made from). Views are free: a parameter that reads a reshape (or
 *             an order-keeping permute) of a value in memory points to that value's buffer,
 *             and an output that views a value the kernel computes is written by the kernel
 *             with that value's elements; the parameter's value is then the view. A
 *             ::FST_PARAM_WORKSPACE parameter that holds no graph value (the scratch of a
 *             reduction split across blocks: its partials and its counters) gives
 *             ::FST_VALUE_INVALID; its bytes start at the workspace offset in @p out_index.
 */
FST_API fst_status fst_kernel_param(const fst_kernel* kernel, size_t index, fst_param_kind* out_kind,
                                    size_t* out_index, fst_value* out_value);

/** @brief Estimated global-memory bytes read and written by one launch. */
FST_API fst_status fst_kernel_estimated_bytes(const fst_kernel* kernel, uint64_t* out_read_bytes,
                                              uint64_t* out_written_bytes);

/** How a kernel must be launched. */
typedef enum fst_launch_kind {
  FST_LAUNCH_REGULAR = 0,     /**< cuLaunchKernel. */
  FST_LAUNCH_COOPERATIVE = 1, /**< cuLaunchCooperativeKernel: blocks wait for each other (a grid-wide
                                   barrier, or groups of blocks), so every block must be resident at
                                   once. */
  FST_LAUNCH_CLUSTER = 2      /**< Since 1.3. cuLaunchKernelEx with a cluster dimension of
                                   fst_kernel_cluster_blocks() blocks along x (sm_90 and later): the
                                   blocks of each cluster wait for each other. */
} fst_launch_kind;

/** @brief How @p kernel must be launched. Errors: invalid argument (NULL). Thread-safe. */
FST_API fst_status fst_kernel_launch_kind(const fst_kernel* kernel, fst_launch_kind* out_kind);

/**
 * @brief Since 1.3. Blocks per thread-block cluster for a ::FST_LAUNCH_CLUSTER kernel (the
 *        cluster's x dimension; y and z are 1), 1 for every other kernel. The grid's x extent
 *        (fst_kernel_launch_config()) is a multiple of it. Blocks of a cluster are consecutive
 *        in blockIdx.x.
 * Errors: invalid argument (NULL). @p out_blocks untouched on failure. Thread-safe.
 */
FST_API fst_status fst_kernel_cluster_blocks(const fst_kernel* kernel, uint32_t* out_blocks);

/**
 * @brief The kernel's CUfunction (as void*) in the calling thread's current CUDA context, or
 *        in the device's primary context when none is current; loads the kernel (compiling it
 *        if need be) on first use. Valid while the fusion and that context live.
 * A kernel launched with more than 48 KiB of dynamic shared memory (fst_kernel_launch_config())
 * is already opted in to it on the device, so the caller's cuLaunchKernel needs no attribute.
 * Errors: invalid argument (NULL), unsupported (the context runs on the host backend), no
 * compiler, compile, launch (the driver rejected the module). Thread-safe.
 */
FST_API fst_status fst_kernel_function(const fst_kernel* kernel, void** out_function);

/**
 * @brief Launch one kernel, for a framework that runs a plan's kernels itself (around opaque
 *        operations, say), with the kernel's launch configuration and launch kind.
 * @param args One address per parameter in fst_kernel_param() order: device pointers on the
 *        CUDA backend (workspace parameters at the workspace base plus their offset), host
 *        pointers on the host backend. A ::FST_PARAM_CONSTANT parameter takes the constant's
 *        data (fst_fusion_constant()): on the CUDA backend a device copy the caller uploads
 *        and keeps alive, on the host backend the host pointer itself.
 * @param nargs Must equal fst_kernel_param_count().
 * @param stream A CUstream (NULL: the default stream) on the CUDA backend, where the call only
 *        queues the launch; the host backend ignores it and returns when the kernel is done.
 *
 * Zeroed workspace: a kernel may need a range of its workspace parameters to be zero when it
 * starts (fst_kernel_zeroed_workspace(); the counters of a reduction split across blocks). fst_kernel_launch() clears that range at the argument
 * that holds it before the launch, on @p stream; so does fst_fusion_run() for every kernel.
 * A framework launching the kernel function itself (fst_kernel_function()) must clear it.
 *
 * Aliasing: the rule of fst_fusion_run() applies to the arguments. A written argument
 * overlaps no other argument, except an output parameter that takes an input parameter's
 * buffer exactly where the plan can update that input in place; launches in the plan's
 * order keep that update correct.
 * Errors: invalid argument (NULL, a wrong count or a NULL address, overlapping arguments),
 * no compiler, compile, launch (a cooperative grid too large for the device among them).
 * Thread-safe.
 */
FST_API fst_status fst_kernel_launch(const fst_kernel* kernel, void* const* args, size_t nargs, void* stream);

/**
 * @brief The byte range of the fusion's workspace that must be zero when @p kernel starts,
 *        for a framework that launches kernel functions itself: the counters a reduction
 *        split across blocks uses to find each tile's last block, or the arrival counters of a
 *        row split across a group of blocks. A launch must not rely on a kernel leaving the
 *        range zero (a row split leaves its counters counted; an aborted run leaves any range
 *        undefined): clear it before each launch, on the launch's stream (cuMemsetD8Async). It lies within
 *        one ::FST_PARAM_WORKSPACE parameter of the kernel. fst_fusion_run() and
 *        fst_kernel_launch() clear it themselves.
 * @param[out] out_offset Byte offset of the range in the workspace (0 when there is none).
 * @param[out] out_bytes Length of the range in bytes; 0 when the kernel needs nothing zeroed.
 * Errors: invalid argument (NULL). Outputs untouched on failure. Thread-safe.
 */
FST_API fst_status fst_kernel_zeroed_workspace(const fst_kernel* kernel, size_t* out_offset, size_t* out_bytes);
/** @} */

/* ------------------------------------------------------------------------ */
/** @name Steps and opaque operations
 *  A fusion runs as an ordered list of steps, each either "launch kernel k" or "run opaque
 *  operation o" (the caller's: a matmul, attention...). The order respects every dependency:
 *  each opaque operation comes after whatever produces its operands, and before every kernel
 *  that reads its result. A framework that runs plans itself follows the steps; one that lets
 *  fstitch run them passes a callback to fst_fusion_run_with_opaque(). All queries are
 *  thread-safe. Added in ABI node FSTITCH_1.2.
 *  @{ */

/** What a step does. */
typedef enum fst_step_kind {
  FST_STEP_KERNEL = 1, /**< Launch a kernel; the index is its kernel index (fst_fusion_kernel()). */
  FST_STEP_OPAQUE = 2  /**< Run an opaque operation; the index is its opaque index (fst_fusion_opaque()). */
} fst_step_kind;

/**
 * @brief Number of tensor constants the plan reads (those of fst_constant_tensor() that an
 *        output depends on): the ::FST_PARAM_CONSTANT indices are 0 to the count - 1.
 * Errors: invalid argument (NULL). Thread-safe.
 */
FST_API fst_status fst_fusion_constant_count(const fst_fusion* fusion, size_t* out_count);

/**
 * @brief Tensor constant @p index of the plan (in graph order), for a framework that launches
 *        kernels itself: its host data (owned by the fusion, read-only, valid while the fusion
 *        lives; dense row-major in the storage format of its dtype), its size in bytes, and the
 *        value it is in the graph the fusion was made from (for fst_graph_value_type()).
 *        fst_fusion_run() needs none of this: it passes the fusion's own copies.
 * @param out_value May be NULL.
 * Errors: invalid argument (NULL, index out of range); outputs untouched on failure.
 * Thread-safe.
 */
FST_API fst_status fst_fusion_constant(const fst_fusion* fusion, size_t index, const void** out_host_data,
                                       size_t* out_bytes, fst_value* out_value);

/** @brief Number of steps: every kernel and every opaque operation once. Errors: invalid argument. */
FST_API fst_status fst_fusion_step_count(const fst_fusion* fusion, size_t* out_count);

/**
 * @brief The @p index -th step: its kind and the index of its kernel or opaque operation.
 * Errors: invalid argument (NULL, index out of range).
 */
FST_API fst_status fst_fusion_step(const fst_fusion* fusion, size_t index, fst_step_kind* out_kind,
                                   size_t* out_index);

/** @brief Number of opaque operations in the plan. Errors: invalid argument (NULL). */
FST_API fst_status fst_fusion_opaque_count(const fst_fusion* fusion, size_t* out_count);

/**
 * @brief The @p index -th opaque operation (in graph order): its name (owned by the
 *        fusion), its number of operands and, if @p out_value is not NULL, its graph value
 *        (valid for the graph the fusion was made from).
 * Errors: invalid argument (NULL, index out of range).
 */
FST_API fst_status fst_fusion_opaque(const fst_fusion* fusion, size_t index, const char** out_name,
                                     size_t* out_operand_count, fst_value* out_value);

/**
 * @brief Where operand @p operand of opaque operation @p index lives when its step runs, and
 *        what it is. The location is a graph input (index: input index), a graph output
 *        (index: output index), the workspace (index: byte offset) or a tensor constant
 *        (index: constant index, fst_fusion_constant()), as for kernel parameters; the
 *        buffer is dense and row-major.
 * @param[out] out_dims Receives @p out_rank dims, owned by the fusion (NULL for rank 0).
 * Errors: invalid argument (NULL, an index out of range).
 */
FST_API fst_status fst_fusion_opaque_operand(const fst_fusion* fusion, size_t index, size_t operand,
                                             fst_param_kind* out_kind, size_t* out_location,
                                             fst_dtype* out_dtype, size_t* out_rank, const int64_t** out_dims);

/**
 * @brief Where opaque operation @p index must write its result (a graph output or the
 *        workspace), and its dtype and dims, as for fst_fusion_opaque_operand().
 * Errors: invalid argument (NULL, index out of range).
 */
FST_API fst_status fst_fusion_opaque_result(const fst_fusion* fusion, size_t index, fst_param_kind* out_kind,
                                            size_t* out_location, fst_dtype* out_dtype, size_t* out_rank,
                                            const int64_t** out_dims);

/** One call of an opaque operation, valid only while the callback that receives it runs. */
typedef struct fst_opaque_call fst_opaque_call;

/**
 * @brief Runs one opaque operation. Called on the thread that started the run, once per
 *        opaque step, in step order. On the CUDA backend the pointers are device pointers and
 *        the work must be queued on the call's stream (fst_opaque_call_stream()), after the
 *        kernels fstitch queued before; on the host backend and in reference evaluation they
 *        are host pointers and the work must be done when the callback returns.
 * @return ::FST_OK, or an error status that stops the run; the run then returns that status
 *         with a message naming the operation (and the text given to fst_opaque_call_fail()).
 */
typedef fst_status (*fst_opaque_callback)(const fst_opaque_call* call, void* user_data);

/** @brief The operation's name (as given to fst_opaque()), owned by the call. */
FST_API fst_status fst_opaque_call_name(const fst_opaque_call* call, const char** out_name);

/** @brief The operation's graph value. */
FST_API fst_status fst_opaque_call_value(const fst_opaque_call* call, fst_value* out_value);

/** @brief The number of operands. */
FST_API fst_status fst_opaque_call_operand_count(const fst_opaque_call* call, size_t* out_count);

/**
 * @brief Operand @p index: a dense row-major buffer (read only), its dtype and dims (owned by
 *        the call; NULL for rank 0). Errors: invalid argument (NULL, index out of range).
 */
FST_API fst_status fst_opaque_call_operand(const fst_opaque_call* call, size_t index, const void** out_data,
                                           fst_dtype* out_dtype, size_t* out_rank, const int64_t** out_dims);

/** @brief The result buffer the operation must fill (dense row-major), its dtype and dims. */
FST_API fst_status fst_opaque_call_result(const fst_opaque_call* call, void** out_data, fst_dtype* out_dtype,
                                          size_t* out_rank, const int64_t** out_dims);

/** @brief The run's CUstream (as void*; NULL: the default stream, and always NULL on the host). */
FST_API fst_status fst_opaque_call_stream(const fst_opaque_call* call, void** out_stream);

/**
 * @brief Records why the operation failed (copied; at most 4096 bytes are kept), for the
 *        message of the run the callback then stops by returning an error status.
 */
FST_API fst_status fst_opaque_call_fail(const fst_opaque_call* call, const char* message);

/**
 * @brief fst_fusion_run() for plans with opaque operations: runs the steps in order,
 *        launching kernels as fst_fusion_run() does and calling @p callback for each opaque
 *        step with the locations the plan gives its operands and result.
 * @param callback May be NULL only when the plan has no opaque operation.
 * Buffers, aliasing, workspace and stream are as for fst_fusion_run(); the workspace holds
 * opaque results that are no graph outputs, so the callback writes into it.
 * Errors: those of fst_fusion_run(), invalid argument (a NULL callback with opaque steps),
 * and the status a callback returns (with the operation named in the message). Thread-safe
 * as long as the callback is.
 */
FST_API fst_status fst_fusion_run_with_opaque(const fst_fusion* fusion, const void* const* inputs,
                                              size_t ninputs, void* const* outputs, size_t noutputs,
                                              void* workspace, void* stream, fst_opaque_callback callback,
                                              void* user_data);

/**
 * @brief fst_graph_evaluate_reference() for graphs with opaque operations: each one runs
 *        through @p callback on host buffers (operands in their storage dtypes), in graph
 *        order, so a framework can check any graph against fused runs with the same callback.
 * @param callback May be NULL only when the graph has no opaque operation.
 * Errors: those of fst_graph_evaluate_reference() and the status a callback returns.
 */
FST_API fst_status fst_graph_evaluate_reference_with_opaque(const fst_graph* graph, const void* const* inputs,
                                                            size_t ninputs, void* const* outputs, size_t noutputs,
                                                            fst_opaque_callback callback, void* user_data);
/** @} */

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* FSTITCH_H */
