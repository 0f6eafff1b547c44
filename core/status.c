/* status.c — the status table's names and messages, and rt_error helpers. */
#include "core/status.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static const char *const status_names[] = {
#define RT_STATUS_NAME(name, msg) #name,
    RT_STATUS_TABLE(RT_STATUS_NAME)
#undef RT_STATUS_NAME
};

static const char *const status_messages[] = {
#define RT_STATUS_MSG(name, msg) msg,
    RT_STATUS_TABLE(RT_STATUS_MSG)
#undef RT_STATUS_MSG
};

const char *rt_status_name(int code) {
  if (code < 0 || code >= RT_STATUS_COUNT) return "unknown";
  return status_names[code];
}

const char *rt_status_message(int code) {
  if (code < 0 || code >= RT_STATUS_COUNT) return "unknown status code";
  return status_messages[code];
}

int rt_status_from_name(const char *name) {
  for (int i = 0; i < RT_STATUS_COUNT; i++)
    if (strcmp(status_names[i], name) == 0) return i;
  return -1;
}

void rt_error_clear(rt_error *err) {
  if (err) memset(err, 0, sizeof *err);
}

rt_status rt_error_set(rt_error *err, rt_status code, const char *fmt, ...) {
  if (!err) return code;
  err->code = code;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err->text, sizeof err->text, fmt, ap);
  va_end(ap);
  return code;
}

rt_status rt_error_at(rt_error *err, rt_status code, const char *source, const char *field,
                      int column, const char *fmt, ...) {
  if (!err) return code;
  char buf[sizeof err->text];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  rt_error_set(err, code, "%s", buf);
  rt_error_locate(err, source, field, 0, column);
  return code;
}

void rt_error_locate(rt_error *err, const char *source, const char *field, int line, int column) {
  if (!err) return;
  if (source) snprintf(err->source, sizeof err->source, "%s", source);
  if (field) snprintf(err->field, sizeof err->field, "%s", field);
  err->line = line;
  err->column = column;
}

void rt_error_format(const rt_error *err, char *buf, size_t size) {
  if (!buf || size == 0) return;
  buf[0] = '\0';
  if (!err) return;
  size_t n = 0;
#define APPEND(...)                                      \
  do {                                                   \
    if (n < size) {                                      \
      int w_ = snprintf(buf + n, size - n, __VA_ARGS__); \
      if (w_ > 0) n += (size_t)w_;                       \
    }                                                    \
  } while (0)
  if (err->source[0]) APPEND("%s: ", err->source);
  if (err->field[0]) APPEND("%s: ", err->field);
  if (err->line > 0 && err->column > 0)
    APPEND("line %d, column %d: ", err->line, err->column);
  else if (err->line > 0)
    APPEND("line %d: ", err->line);
  else if (err->column > 0)
    APPEND("column %d: ", err->column);
  APPEND("%s", err->text[0] ? err->text : rt_status_message(err->code));
#undef APPEND
}
