/* Version, status names and dtype helpers: the calls that never fail. */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "capi_check.h"

static void test_version(void) {
  char expected[64];
  CHECK(FST_VERSION_NUMBER == FST_VERSION_MAJOR * 10000 + FST_VERSION_MINOR * 100 + FST_VERSION_PATCH);
  CHECK(fst_version_number() == (unsigned)FST_VERSION_NUMBER);
  snprintf(expected, sizeof expected, "%d.%d.%d", FST_VERSION_MAJOR, FST_VERSION_MINOR, FST_VERSION_PATCH);
  CHECK(fst_version_string() != NULL);
  CHECK(strcmp(fst_version_string(), expected) == 0);
  CHECK(FST_ABI_VERSION == 1);
}

static void test_status_strings(void) {
  static const struct {
    fst_status status;
    const char* name;
  } kNames[] = {
      {FST_OK, "FST_OK"},
      {FST_ERROR_INVALID_ARGUMENT, "FST_ERROR_INVALID_ARGUMENT"},
      {FST_ERROR_SHAPE, "FST_ERROR_SHAPE"},
      {FST_ERROR_DTYPE, "FST_ERROR_DTYPE"},
      {FST_ERROR_UNSUPPORTED, "FST_ERROR_UNSUPPORTED"},
      {FST_ERROR_OUT_OF_MEMORY, "FST_ERROR_OUT_OF_MEMORY"},
      {FST_ERROR_NO_DEVICE, "FST_ERROR_NO_DEVICE"},
      {FST_ERROR_NO_DRIVER, "FST_ERROR_NO_DRIVER"},
      {FST_ERROR_NO_COMPILER, "FST_ERROR_NO_COMPILER"},
      {FST_ERROR_COMPILE, "FST_ERROR_COMPILE"},
      {FST_ERROR_LAUNCH, "FST_ERROR_LAUNCH"},
      {FST_ERROR_PARSE, "FST_ERROR_PARSE"},
      {FST_ERROR_INTERNAL, "FST_ERROR_INTERNAL"},
  };
  static const int kUnknown[] = {13, 14, -1, 100, INT_MAX, INT_MIN};
  size_t i;
  for (i = 0; i < sizeof kNames / sizeof kNames[0]; ++i) {
    const char* name = fst_status_string(kNames[i].status);
    CHECK(name != NULL && strcmp(name, kNames[i].name) == 0);
  }
  CHECK((int)FST_OK == 0);
  for (i = 0; i < sizeof kUnknown / sizeof kUnknown[0]; ++i) {
    const char* name = fst_status_string((fst_status)kUnknown[i]);
    CHECK(name != NULL && strcmp(name, "FST_STATUS_UNKNOWN") == 0);
  }
}

static void test_dtypes(void) {
  static const struct {
    fst_dtype dtype;
    size_t size;
    const char* name;
  } kDTypes[] = {
      {FST_F32, 4, "f32"}, {FST_F16, 2, "f16"}, {FST_BF16, 2, "bf16"},
      {FST_F64, 8, "f64"}, {FST_I8, 1, "i8"},   {FST_I32, 4, "i32"},
      {FST_I64, 8, "i64"}, {FST_U8, 1, "u8"},   {FST_BOOL, 1, "bool"},
  };
  static const int kUnknown[] = {0, 10, -1, 255, INT_MAX, INT_MIN};
  size_t i;
  for (i = 0; i < sizeof kDTypes / sizeof kDTypes[0]; ++i) {
    CHECK(fst_dtype_size(kDTypes[i].dtype) == kDTypes[i].size);
    CHECK(fst_dtype_name(kDTypes[i].dtype) != NULL &&
          strcmp(fst_dtype_name(kDTypes[i].dtype), kDTypes[i].name) == 0);
  }
  for (i = 0; i < sizeof kUnknown / sizeof kUnknown[0]; ++i) {
    CHECK(fst_dtype_size((fst_dtype)kUnknown[i]) == 0);
    CHECK(fst_dtype_name((fst_dtype)kUnknown[i]) != NULL &&
          strcmp(fst_dtype_name((fst_dtype)kUnknown[i]), "?") == 0);
  }
  CHECK(FST_MAX_RANK == 8);
}

/* These never fail, so the thread's last error must still be clear afterwards. */
void test_basics(void) {
  test_version();
  test_status_strings();
  test_dtypes();
  CHECK(fst_last_error_status() == FST_OK);
  CHECK(strcmp(fst_last_error_message(), "") == 0);
}
