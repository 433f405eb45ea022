#include "graph_precision.h"

#include <stdlib.h>
#include <string.h>

/* Reads "%N" at *p (the printer names value N "%N"); -1 if there is none. */
static long read_value_id(const char** p) {
  long id = 0;
  const char* s = *p;
  if (*s != '%' || s[1] < '0' || s[1] > '9') return -1;
  for (++s; *s >= '0' && *s <= '9'; ++s) {
    if (id > 100000000L) return -1;
    id = id * 10 + (*s - '0');
  }
  *p = s;
  return id;
}

static int starts_with(const char* s, const char* prefix) {
  return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* Whether the type at `type` (after the last ':' of a value line) is f16 or bf16. */
static int is_low_precision_type(const char* type) {
  size_t length;
  while (*type == ' ') ++type;
  if (starts_with(type, "f16")) {
    length = 3;
  } else if (starts_with(type, "bf16")) {
    length = 4;
  } else {
    return 0;
  }
  return type[length] == '[' || type[length] == '\n' || type[length] == '\0' || type[length] == ' ';
}

/* One value line "%N = op operands... : type": its flag from its own type and its operands'. */
static int read_value_line(const char* line, const char* end, unsigned char* low, size_t capacity) {
  const char* p = line;
  const char* colon = NULL;
  const char* s;
  long id = read_value_id(&p);
  int in_string = 0, computed;
  unsigned char flag = 0;
  if (id < 0 || (size_t)id >= capacity || !starts_with(p, " = ")) return -1;
  p += 3;
  computed = !starts_with(p, "input ") && !starts_with(p, "constant ");
  for (s = p; s < end; ++s) {
    if (*s == '"') in_string = !in_string;
    if (!in_string && *s == ':') colon = s;
  }
  if (colon == NULL) return -1;
  for (s = p; s < colon; ++s) {
    long operand;
    const char* q = s;
    if (*s == '"') { /* names in strings are not operands */
      for (++s; s < colon && *s != '"'; ++s) {
      }
      continue;
    }
    operand = read_value_id(&q);
    if (operand < 0) continue;
    if (operand >= id) return -1; /* operands come before their users */
    flag |= low[operand];
    s = q - 1;
  }
  if (computed && is_low_precision_type(colon + 1)) flag = 1;
  low[id] = flag;
  return 0;
}

int example_low_precision_outputs(const char* printed, size_t noutputs, unsigned char* flags) {
  size_t capacity = 1, outputs = 0, i;
  const char* line;
  unsigned char* low;
  int ok = 1;
  for (line = printed; *line; ++line) capacity += *line == '\n';
  low = calloc(capacity, 1);
  for (i = 0; i < noutputs; ++i) flags[i] = 1;
  if (low == NULL) return -1;
  for (line = printed; ok && *line;) {
    const char* end = strchr(line, '\n');
    if (end == NULL) end = line + strlen(line);
    if (line[0] == '%') {
      ok = read_value_line(line, end, low, capacity) == 0;
    } else if (starts_with(line, "output \"")) {
      /* output "name" = %N; the name has no '"' in it */
      const char* p = strchr(line + 8, '"');
      long id;
      if (p == NULL || p > end || !starts_with(p, "\" = ")) {
        ok = 0;
        break;
      }
      p += 4;
      id = read_value_id(&p);
      if (id < 0 || (size_t)id >= capacity || outputs >= noutputs) {
        ok = 0;
        break;
      }
      flags[outputs++] = low[id];
    }
    line = *end ? end + 1 : end;
  }
  if (!ok || outputs != noutputs) {
    for (i = 0; i < noutputs; ++i) flags[i] = 1;
    ok = 0;
  }
  free(low);
  return ok ? 0 : -1;
}
