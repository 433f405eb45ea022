/* Shared checking helpers of the C API test: counters, CHECK macros and the expectations
 * that every failing fstitch call must meet. Plain C99. */
#ifndef FSTITCH_CAPI_CHECK_H
#define FSTITCH_CAPI_CHECK_H

#include <stddef.h>

#include "fstitch.h"

/* Records one check; on failure prints file:line, the expression and the thread's last error. */
void capi_record(int ok, const char* file, int line, const char* what);

#define CHECK(cond) capi_record((cond) != 0, __FILE__, __LINE__, #cond)

/* A call that must succeed. */
void capi_expect_ok(fst_status got, const char* file, int line, const char* call);
#define CHECK_OK(call) capi_expect_ok((call), __FILE__, __LINE__, #call)

/* A call that must fail with exactly `want`: fst_last_error_status() agrees, and
 * fst_last_error_message() names `function` and contains `detail` (the argument or value
 * at fault; NULL to skip). */
void capi_expect_failure(fst_status got, fst_status want, const char* function, const char* detail,
                         const char* file, int line, const char* call);
#define CHECK_FAIL(call, want, function, detail) \
  capi_expect_failure((call), (want), (function), (detail), __FILE__, __LINE__, #call)

/* A builder on graph `g` that must fail with `want`. Beyond CHECK_FAIL's checks it verifies
 * the sticky graph error: fst_graph_status() and fst_graph_error_message() keep the first
 * error, later builders return FST_VALUE_INVALID and add nothing, and verify, print,
 * evaluate, fuse and fst_output report the same status. Destroys `g`. */
void capi_expect_builder_failure(fst_graph* g, fst_value got, fst_status want, const char* function,
                                 const char* detail, const char* file, int line, const char* call);
#define CHECK_BUILDER_FAIL(g, call, want, function, detail) \
  capi_expect_builder_failure((g), (call), (want), (function), (detail), __FILE__, __LINE__, #call)

/* The status of a dim of 0: empty tensors are a valid request this version does not
 * support (negative dims are shape errors). */
#define CAPI_EMPTY_DIM_STATUS FST_ERROR_UNSUPPORTED

/* An object whose address marks out-parameters that a failing call must leave untouched. */
extern char capi_sentinel_object;
#define SENTINEL_PTR ((void*)&capi_sentinel_object)

/* Number of values in `g` (0 and a failed check if the query fails). */
size_t capi_value_count(const fst_graph* g);

/* A fresh graph on the shared test context (a failed check and NULL if creation fails). */
fst_graph* capi_new_graph(void);

/* The context every section shares; created by main. */
extern fst_context* capi_context;

/* A graph that uses every kind of operation (all unary, binary and reduce ops, select,
 * cast, broadcast, reshape, permute, iota, constants of every dtype, opaque), with outputs.
 * NULL and a failed check if any builder fails. */
fst_graph* capi_build_all_ops(void);

/* Checks dtype, rank and dims of `value` through the query functions. */
void capi_check_value(const fst_graph* g, fst_value value, fst_dtype dtype, size_t rank, const int64_t* dims,
                      const char* file, int line);
#define CHECK_VALUE(g, value, dtype, rank, dims) \
  capi_check_value((g), (value), (dtype), (rank), (dims), __FILE__, __LINE__)

/* A new graph with the input "x" f32[2,3]; NULL and a failed check if that fails. */
fst_graph* capi_graph_with_x(fst_value* out_x);

/* A value of another live graph, and a value of a graph that no longer exists. */
extern fst_value capi_foreign_value;
extern fst_value capi_dead_value;

/* True if `text` contains `part`. */
int capi_contains(const char* text, const char* part);

/* Sections, one per file. */
void test_basics(void);
void test_context(void);
void test_graph_lifetime(void);
void test_builders_ok(void);
void test_builder_errors_operands(void);
void test_builder_errors_shapes(void);
void test_movement(void);
void test_queries(void);
void test_text(void);
void test_evaluate(void);
void test_threads(void);
void test_fusion(void);
void test_sizes(void);
void test_aliasing(void);
void test_opaque_steps(void);
void test_tensor_constants(void);
void test_split_reductions(void);
void test_split_rows(void);
void test_grid_for_occupancy(void);

#endif /* FSTITCH_CAPI_CHECK_H */
