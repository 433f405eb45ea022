/* Context options, contexts and logging. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capi_check.h"

/* What the log callback saw. */
typedef struct log_record {
  int calls;
  int info_calls;
  int wrong_level;
  char last_message[512];
  fst_log_level last_level;
} log_record;

static void record_log(void* user_data, fst_log_level level, const char* message) {
  log_record* record = (log_record*)user_data;
  size_t n = message != NULL ? strlen(message) : 0;
  ++record->calls;
  if (level == FST_LOG_INFO) ++record->info_calls;
  if (level < FST_LOG_ERROR || level > FST_LOG_TRACE) ++record->wrong_level;
  if (n >= sizeof record->last_message) n = sizeof record->last_message - 1;
  if (message != NULL) memcpy(record->last_message, message, n);
  record->last_message[n] = '\0';
  record->last_level = level;
}

/* The log level and cache directory the defaults must resolve to in this environment. */
static fst_log_level expected_default_level(void) {
  static const char* const kNames[] = {"off", "error", "warn", "info", "debug", "trace"};
  const char* env = getenv("FSTITCH_LOG");
  int i;
  if (env == NULL || env[0] == '\0') return FST_LOG_WARN;
  for (i = 0; i <= 5; ++i) {
    if (strcmp(env, kNames[i]) == 0 || (env[0] == (char)('0' + i) && env[1] == '\0')) return (fst_log_level)i;
  }
  return FST_LOG_WARN;
}

/* The default backend: FSTITCH_BACKEND when it names one, else auto. */
static fst_backend expected_default_backend(void) {
  const char* env = getenv("FSTITCH_BACKEND");
  if (env != NULL && strcmp(env, "cuda") == 0) return FST_BACKEND_CUDA;
  if (env != NULL && strcmp(env, "host") == 0) return FST_BACKEND_HOST;
  return FST_BACKEND_AUTO;
}

static void test_options_bad_input(void) {
  static const int kBadBackends[] = {3, -1, 100, INT_MAX, INT_MIN};
  static const int kBadLevels[] = {6, -1, 100, INT_MAX, INT_MIN};
  fst_context_options* options = NULL;
  char value[32];
  size_t i;

  CHECK_FAIL(fst_context_options_create(NULL), FST_ERROR_INVALID_ARGUMENT, "fst_context_options_create",
             "out_options");
  CHECK_FAIL(fst_context_options_set_backend(NULL, FST_BACKEND_HOST), FST_ERROR_INVALID_ARGUMENT,
             "fst_context_options_set_backend", "options");
  CHECK_FAIL(fst_context_options_set_device(NULL, 0), FST_ERROR_INVALID_ARGUMENT,
             "fst_context_options_set_device", "options");
  CHECK_FAIL(fst_context_options_set_log_level(NULL, FST_LOG_INFO), FST_ERROR_INVALID_ARGUMENT,
             "fst_context_options_set_log_level", "options");
  CHECK_FAIL(fst_context_options_set_log_callback(NULL, record_log, NULL), FST_ERROR_INVALID_ARGUMENT,
             "fst_context_options_set_log_callback", "options");
  CHECK_FAIL(fst_context_options_set_cache_dir(NULL, "/tmp"), FST_ERROR_INVALID_ARGUMENT,
             "fst_context_options_set_cache_dir", "options");
  fst_context_options_destroy(NULL);

  CHECK_OK(fst_context_options_create(&options));
  if (options == NULL) return;
  for (i = 0; i < sizeof kBadBackends / sizeof kBadBackends[0]; ++i) {
    snprintf(value, sizeof value, "%d", kBadBackends[i]);
    CHECK_FAIL(fst_context_options_set_backend(options, (fst_backend)kBadBackends[i]),
               FST_ERROR_INVALID_ARGUMENT, "fst_context_options_set_backend", value);
  }
  CHECK_FAIL(fst_context_options_set_device(options, -1), FST_ERROR_INVALID_ARGUMENT,
             "fst_context_options_set_device", "-1");
  CHECK_FAIL(fst_context_options_set_device(options, INT_MIN), FST_ERROR_INVALID_ARGUMENT,
             "fst_context_options_set_device", "negative");
  for (i = 0; i < sizeof kBadLevels / sizeof kBadLevels[0]; ++i) {
    snprintf(value, sizeof value, "%d", kBadLevels[i]);
    CHECK_FAIL(fst_context_options_set_log_level(options, (fst_log_level)kBadLevels[i]),
               FST_ERROR_INVALID_ARGUMENT, "fst_context_options_set_log_level", value);
  }
  CHECK_FAIL(fst_context_options_set_cache_dir(options, ""), FST_ERROR_INVALID_ARGUMENT,
             "fst_context_options_set_cache_dir", "empty");

  /* The failed setters changed nothing: a context from these options has the defaults. */
  {
    fst_context* context = NULL;
    fst_backend backend = (fst_backend)77;
    fst_log_level level = (fst_log_level)77;
    CHECK_OK(fst_context_create(options, &context));
    CHECK_OK(fst_context_backend(context, &backend));
    CHECK(backend == expected_default_backend());
    CHECK_OK(fst_context_log_level(context, &level));
    CHECK(level == expected_default_level());
    fst_context_destroy(context);
  }
  fst_context_options_destroy(options);
}

static void test_context_bad_input(void) {
  fst_context* context = NULL;
  fst_context* untouched = (fst_context*)SENTINEL_PTR;
  fst_backend backend = (fst_backend)77;
  fst_log_level level = (fst_log_level)77;
  const char* path = (const char*)SENTINEL_PTR;
  uint64_t count = 77;
  static const int kBadLevels[] = {0, 6, -1, INT_MAX, INT_MIN};
  char value[32];
  size_t i;

  CHECK_FAIL(fst_context_create(NULL, NULL), FST_ERROR_INVALID_ARGUMENT, "fst_context_create", "out_context");
  fst_context_destroy(NULL);
  CHECK_FAIL(fst_context_backend(NULL, &backend), FST_ERROR_INVALID_ARGUMENT, "fst_context_backend",
             "context");
  CHECK_FAIL(fst_context_log_level(NULL, &level), FST_ERROR_INVALID_ARGUMENT, "fst_context_log_level",
             "context");
  CHECK_FAIL(fst_context_cache_dir(NULL, &path), FST_ERROR_INVALID_ARGUMENT, "fst_context_cache_dir",
             "context");
  CHECK_FAIL(fst_context_log(NULL, FST_LOG_WARN, "x"), FST_ERROR_INVALID_ARGUMENT, "fst_context_log",
             "context");
  CHECK_FAIL(fst_context_compile_stat(NULL, FST_COMPILE_STAT_COMPILED, &count), FST_ERROR_INVALID_ARGUMENT,
             "fst_context_compile_stat", "context");
  CHECK(backend == (fst_backend)77 && level == (fst_log_level)77 && path == (const char*)SENTINEL_PTR);
  CHECK(count == 77);
  CHECK(untouched == (fst_context*)SENTINEL_PTR);

  CHECK_OK(fst_context_create(NULL, &context));
  if (context == NULL) return;
  CHECK_FAIL(fst_context_backend(context, NULL), FST_ERROR_INVALID_ARGUMENT, "fst_context_backend",
             "out_backend");
  CHECK_FAIL(fst_context_log_level(context, NULL), FST_ERROR_INVALID_ARGUMENT, "fst_context_log_level",
             "out_level");
  CHECK_FAIL(fst_context_cache_dir(context, NULL), FST_ERROR_INVALID_ARGUMENT, "fst_context_cache_dir",
             "out_path");
  CHECK_FAIL(fst_context_log(context, FST_LOG_WARN, NULL), FST_ERROR_INVALID_ARGUMENT, "fst_context_log",
             "message");
  CHECK_FAIL(fst_context_compile_stat(context, FST_COMPILE_STAT_DISK_HITS, NULL), FST_ERROR_INVALID_ARGUMENT,
             "fst_context_compile_stat", "out_value");
  CHECK_FAIL(fst_context_compile_stat(context, (fst_compile_stat)6, &count), FST_ERROR_INVALID_ARGUMENT,
             "fst_context_compile_stat", "not a value of fst_compile_stat");
  CHECK_FAIL(fst_context_compile_stat(context, (fst_compile_stat)-1, &count), FST_ERROR_INVALID_ARGUMENT,
             "fst_context_compile_stat", "-1");
  CHECK(count == 77);
  /* A new context has compiled nothing. */
  CHECK_OK(fst_context_compile_stat(context, FST_COMPILE_STAT_COMPILE_NANOSECONDS, &count));
  CHECK(count == 0);
  for (i = 0; i < sizeof kBadLevels / sizeof kBadLevels[0]; ++i) {
    snprintf(value, sizeof value, "%d", kBadLevels[i]);
    CHECK_FAIL(fst_context_log(context, (fst_log_level)kBadLevels[i], "x"), FST_ERROR_INVALID_ARGUMENT,
               "fst_context_log", value);
  }
  fst_context_destroy(context);
}

/* Defaults, and every setter's effect as the queries report it. */
static void test_settings(void) {
  fst_context_options* options = NULL;
  fst_context* context = NULL;
  fst_backend backend = (fst_backend)77;
  fst_log_level level = (fst_log_level)77;
  const char* path = NULL;
  const char* env_dir = getenv("FSTITCH_CACHE_DIR");
  char default_dir[1024] = "";
  fst_status status;
  int sm = 0;

  CHECK_OK(fst_context_create(NULL, &context));
  CHECK_OK(fst_context_backend(context, &backend));
  CHECK(backend == expected_default_backend());
  CHECK_OK(fst_context_log_level(context, &level));
  CHECK(level == expected_default_level());
  CHECK_OK(fst_context_cache_dir(context, &path));
  CHECK(path != NULL && path[0] != '\0');
  if (env_dir != NULL && env_dir[0] != '\0') CHECK(path != NULL && strcmp(path, env_dir) == 0);
  if (path != NULL && strlen(path) < sizeof default_dir) strcpy(default_dir, path);
  fst_context_destroy(context);
  context = NULL;

  CHECK_OK(fst_context_options_create(&options));
  CHECK_OK(fst_context_options_set_backend(options, FST_BACKEND_HOST));
  CHECK_OK(fst_context_options_set_device(options, 3));
  CHECK_OK(fst_context_options_set_log_level(options, FST_LOG_OFF));
  CHECK_OK(fst_context_options_set_cache_dir(options, "/nonexistent/fstitch-cache"));
  CHECK_OK(fst_context_create(options, &context));
  fst_context_options_destroy(options); /* contexts do not retain their options */
  CHECK_OK(fst_context_backend(context, &backend));
  CHECK(backend == FST_BACKEND_HOST);
  CHECK_OK(fst_context_log_level(context, &level));
  CHECK(level == FST_LOG_OFF);
  CHECK_OK(fst_context_cache_dir(context, &path));
  CHECK(path != NULL && strcmp(path, "/nonexistent/fstitch-cache") == 0);
  CHECK_OK(fst_context_log(context, FST_LOG_ERROR, "dropped: logging is off"));
  fst_context_destroy(context);
  context = NULL;

  /* The CUDA backend either opens a device or says clearly why it cannot; nothing else. */
  CHECK_OK(fst_context_options_create(&options));
  CHECK_OK(fst_context_options_set_backend(options, FST_BACKEND_CUDA));
  status = fst_context_create(options, &context);
  if (status == FST_OK) {
    CHECK_OK(fst_context_backend(context, &backend));
    CHECK(backend == FST_BACKEND_CUDA);
    CHECK_OK(fst_context_active_backend(context, &backend));
    CHECK(backend == FST_BACKEND_CUDA);
    CHECK_OK(fst_context_device_arch(context, &sm));
    CHECK(sm >= 80);
    fst_context_destroy(context);
  } else {
    CHECK(status == FST_ERROR_NO_DRIVER || status == FST_ERROR_NO_DEVICE);
    CHECK(fst_last_error_status() == status);
    CHECK(capi_contains(fst_last_error_message(), "fst_context_create: "));
    CHECK(strlen(fst_last_error_message()) > strlen("fst_context_create: ") + 10);
    CHECK(context == NULL); /* untouched */
  }
  context = NULL;

  /* Auto settles on one of the two; the device query agrees with it. */
  CHECK_OK(fst_context_options_set_backend(options, FST_BACKEND_AUTO));
  CHECK_OK(fst_context_create(options, &context));
  CHECK_OK(fst_context_backend(context, &backend));
  CHECK(backend == FST_BACKEND_AUTO);
  CHECK_OK(fst_context_active_backend(context, &backend));
  CHECK(backend == FST_BACKEND_CUDA || backend == FST_BACKEND_HOST);
  sm = 77;
  if (backend == FST_BACKEND_HOST) {
    CHECK_FAIL(fst_context_device_arch(context, &sm), FST_ERROR_NO_DEVICE, "fst_context_device_arch",
               "host backend");
    CHECK(sm == 77);
  } else {
    CHECK_OK(fst_context_device_arch(context, &sm));
    CHECK(sm >= 80);
  }
  CHECK_FAIL(fst_context_active_backend(NULL, &backend), FST_ERROR_INVALID_ARGUMENT,
             "fst_context_active_backend", "context");
  CHECK_FAIL(fst_context_active_backend(context, NULL), FST_ERROR_INVALID_ARGUMENT,
             "fst_context_active_backend", "out_backend");
  CHECK_FAIL(fst_context_device_arch(NULL, &sm), FST_ERROR_INVALID_ARGUMENT, "fst_context_device_arch",
             "context");
  CHECK_FAIL(fst_context_device_arch(context, NULL), FST_ERROR_INVALID_ARGUMENT, "fst_context_device_arch",
             "out_sm");
  fst_context_destroy(context);
  context = NULL;

  /* The host backend is always there. */
  CHECK_OK(fst_context_options_set_backend(options, FST_BACKEND_HOST));
  CHECK_OK(fst_context_create(options, &context));
  CHECK_OK(fst_context_active_backend(context, &backend));
  CHECK(backend == FST_BACKEND_HOST);
  fst_context_destroy(context);
  context = NULL;

  /* "off" disables the disk cache; NULL restores the default; the last setting wins. */
  CHECK_OK(fst_context_options_set_cache_dir(options, "off"));
  CHECK_OK(fst_context_create(options, &context));
  CHECK_OK(fst_context_backend(context, &backend));
  CHECK(backend == FST_BACKEND_HOST);
  CHECK_OK(fst_context_cache_dir(context, &path));
  CHECK(path != NULL && strcmp(path, "off") == 0);
  fst_context_destroy(context);
  context = NULL;
  CHECK_OK(fst_context_options_set_cache_dir(options, NULL));
  CHECK_OK(fst_context_create(options, &context));
  CHECK_OK(fst_context_cache_dir(context, &path));
  CHECK(path != NULL && strcmp(path, default_dir) == 0);
  fst_context_destroy(context);
  fst_context_options_destroy(options);
}

static void test_logging(void) {
  fst_context_options* options = NULL;
  fst_context* context = NULL;
  log_record info_record;
  log_record warn_record;
  memset(&info_record, 0, sizeof info_record);
  memset(&warn_record, 0, sizeof warn_record);

  /* At INFO, creating the context logs a line through the callback. */
  CHECK_OK(fst_context_options_create(&options));
  CHECK_OK(fst_context_options_set_log_level(options, FST_LOG_INFO));
  CHECK_OK(fst_context_options_set_log_callback(options, record_log, &info_record));
  CHECK_OK(fst_context_create(options, &context));
  CHECK(info_record.calls >= 1);
  CHECK(info_record.info_calls >= 1);
  CHECK(info_record.last_message[0] != '\0');
  CHECK(info_record.wrong_level == 0);

  /* fst_context_log goes through the same path, filtered by level. */
  info_record.calls = 0;
  CHECK_OK(fst_context_log(context, FST_LOG_WARN, "warn from the test"));
  CHECK(info_record.calls == 1);
  CHECK(info_record.last_level == FST_LOG_WARN);
  CHECK(strcmp(info_record.last_message, "warn from the test") == 0);
  CHECK_OK(fst_context_log(context, FST_LOG_INFO, "info from the test"));
  CHECK(info_record.calls == 2 && info_record.last_level == FST_LOG_INFO);
  CHECK(strcmp(info_record.last_message, "info from the test") == 0);
  CHECK_OK(fst_context_log(context, FST_LOG_DEBUG, "debug from the test"));
  CHECK_OK(fst_context_log(context, FST_LOG_TRACE, "trace from the test"));
  CHECK(info_record.calls == 2);
  fst_context_destroy(context);
  context = NULL;

  /* The options may be reused with another callback; at WARN, INFO lines are dropped. */
  CHECK_OK(fst_context_options_set_log_level(options, FST_LOG_WARN));
  CHECK_OK(fst_context_options_set_log_callback(options, record_log, &warn_record));
  CHECK_OK(fst_context_create(options, &context));
  CHECK(warn_record.info_calls == 0);
  CHECK_OK(fst_context_log(context, FST_LOG_INFO, "dropped"));
  CHECK(warn_record.calls == 0);
  CHECK_OK(fst_context_log(context, FST_LOG_ERROR, "error from the test"));
  CHECK(warn_record.calls == 1 && warn_record.last_level == FST_LOG_ERROR);
  CHECK(strcmp(warn_record.last_message, "error from the test") == 0);
  fst_context_destroy(context);
  context = NULL;

  /* A NULL callback restores stderr: the earlier callback hears nothing more. */
  CHECK_OK(fst_context_options_set_log_callback(options, NULL, NULL));
  CHECK_OK(fst_context_options_set_log_level(options, FST_LOG_ERROR));
  CHECK_OK(fst_context_create(options, &context));
  CHECK_OK(fst_context_log(context, FST_LOG_ERROR, "capi_test: this line on stderr is expected"));
  CHECK(warn_record.calls == 1);
  fst_context_destroy(context);
  fst_context_options_destroy(options);
}

void test_context(void) {
  test_options_bad_input();
  test_context_bad_input();
  test_settings();
  test_logging();
}
