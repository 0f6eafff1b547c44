/* check_text.c — markup, control characters and bytes that are not UTF-8 in stored texts (see
 * check_text.h). */
#include "db/check_text.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* What a column may hold. */
enum { TEXT_PLAIN, TEXT_FREE };

/* The text columns rooftune writes, by table: plain ones hold names, statuses, times, hashes,
 * NAME=VALUE lists and identifiers; free ones sentences, messages, commands and expressions. */
static const struct {
  const char *table;
  const char *plain; /* columns, comma-separated */
  const char *free;
} text_columns[] = {
    {"devices", "name", ""},
    {"device_ceilings", "kind,dtype,measured_at", ""},
    {"templates", "name,family,source_hash,manifest_hash", ""},
    {"problems", "family,shape,dtype,layout,dims,args", ""},
    {"runs", "uid,toolkit,arch,strategy,rooftune_version,started_at,finished_at,status", "command"},
    {"results",
     "uid,toolkit,config,status,timing,limiter,diag_limit,diag_lever,created_at,code_hash,"
     "precision,"
     "diag_basis,ctr_stalls,path",
     "detail,diag_sentence,diag_move,verdict"},
    {"winners", "toolkit,entry,arch,vars,library_algo,updated_at",
     "grid_x,grid_y,grid_z,block_x,block_y,block_z,smem"},
    {"winner_recipes", "env", "derived,constraints"},
    {"run_owners", "host,boot_id", ""},
    {"claims", "toolkit,key", ""},
    {"calibrations", "gpu,template,kind,measured_at", ""},
};

typedef struct out {
  char *buf;
  size_t size, *used;
  int *problems;
} out;

static void line(out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void line(out *o, const char *fmt, ...) {
  (*o->problems)++;
  if (!o->buf || *o->used + 1 >= o->size) return;
  va_list ap;
  va_start(ap, fmt);
  int w = vsnprintf(o->buf + *o->used, o->size - *o->used, fmt, ap);
  va_end(ap);
  if (w < 0) return;
  *o->used += (size_t)w;
  if (*o->used >= o->size) *o->used = o->size - 1;
  if (*o->used + 1 < o->size) {
    o->buf[(*o->used)++] = '\n';
    o->buf[*o->used] = '\0';
  }
}

/* What is wrong with the n bytes at s, or NULL: not UTF-8, a control character, or (plain)
 * markup. */
static const char *text_fault(const unsigned char *s, size_t n, int kind) {
  for (size_t i = 0; i < n;) {
    unsigned c = s[i];
    if (c < 0x80) {
      if ((c < 0x20 && !(kind == TEXT_FREE && (c == '\t' || c == '\n'))) || c == 0x7f)
        return "a control character";
      if (kind == TEXT_PLAIN && (c == '<' || c == '>' || c == '&' || c == '"'))
        return "markup (< > & or \")";
      i++;
      continue;
    }
    size_t k = (c >= 0xc2 && c <= 0xdf)   ? 2
               : (c >= 0xe0 && c <= 0xef) ? 3
               : (c >= 0xf0 && c <= 0xf4) ? 4
                                          : 0;
    if (!k || i + k > n) return "bytes that are not UTF-8";
    for (size_t j = 1; j < k; j++)
      if ((s[i + j] & 0xc0) != 0x80) return "bytes that are not UTF-8";
    if ((c == 0xe0 && s[i + 1] < 0xa0) || (c == 0xed && s[i + 1] >= 0xa0) ||
        (c == 0xf0 && s[i + 1] < 0x90) || (c == 0xf4 && s[i + 1] >= 0x90))
      return "bytes that are not UTF-8";
    i += k;
  }
  return NULL;
}

/* The first bytes of s as printable ASCII (others as \xNN), for the line. */
static void excerpt(const unsigned char *s, size_t n, char *buf, size_t size) {
  size_t k = 0;
  for (size_t i = 0; i < n && k + 5 < size && i < 40; i++) {
    unsigned c = s[i];
    if (c >= 0x20 && c < 0x7f && c != '\\')
      buf[k++] = (char)c;
    else
      k += (size_t)snprintf(buf + k, size - k, "\\x%02x", c);
  }
  buf[k] = '\0';
  if (n > 40 && k + 4 < size) strcat(buf, "...");
}

/* 1 when table t has column c. */
static int has_column(sqlite3 *h, const char *t, const char *c) {
  sqlite3_stmt *st = NULL;
  int found = 0;
  if (sqlite3_prepare_v2(h, "SELECT 1 FROM pragma_table_info(?1) WHERE name = ?2", -1, &st, NULL) ==
      SQLITE_OK) {
    sqlite3_bind_text(st, 1, t, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, c, -1, SQLITE_STATIC);
    found = sqlite3_step(st) == SQLITE_ROW;
  }
  sqlite3_finalize(st);
  return found;
}

/* Checks column c of table t, every row. */
static rt_status check_column(sqlite3 *h, const char *t, const char *c, int kind, out *o,
                              rt_error *err) {
  if (!has_column(h, t, c)) return RT_OK;
  char sql[200];
  snprintf(sql, sizeof sql,
           "SELECT rowid, CAST(\"%s\" AS BLOB) FROM \"%s\" WHERE \"%s\" IS NOT NULL ORDER BY rowid",
           c, t, c);
  sqlite3_stmt *st = NULL;
  int rc = sqlite3_prepare_v2(h, sql, -1, &st, NULL);
  if (rc != SQLITE_OK)
    return rt_error_set(err, RT_ERR_DB, "checking %s.%s: %s", t, c, sqlite3_errmsg(h));
  int rows = 0;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    const unsigned char *v = sqlite3_column_blob(st, 1);
    size_t n = (size_t)sqlite3_column_bytes(st, 1);
    const char *why = v ? text_fault(v, n, kind) : NULL;
    if (!why) continue;
    if (++rows > 20) continue;
    char ex[200];
    excerpt(v, n, ex, sizeof ex);
    line(o,
         "%s row %lld: %s holds %s, which rooftune never writes there (\"%s\"): the file was made "
         "or changed "
         "by something else",
         t, (long long)sqlite3_column_int64(st, 0), c, why, ex);
  }
  sqlite3_finalize(st);
  if (rows > 20) {
    line(o, "... and %d more texts like it in %s.%s", rows - 20, t, c);
    *o->problems += rows - 21; /* each is a problem; the summary line counted one */
  }
  if (rc != SQLITE_DONE)
    return rt_error_set(err, RT_ERR_DB, "checking %s.%s: %s", t, c, sqlite3_errmsg(h));
  return RT_OK;
}

rt_status db_check_texts(sqlite3 *h, char *buf, size_t size, size_t *used, int *problems,
                         rt_error *err) {
  out o = {buf, size, used, problems};
  for (size_t i = 0; i < sizeof text_columns / sizeof text_columns[0]; i++)
    for (int kind = TEXT_PLAIN; kind <= TEXT_FREE; kind++) {
      char cols[300];
      snprintf(cols, sizeof cols, "%s",
               kind == TEXT_PLAIN ? text_columns[i].plain : text_columns[i].free);
      for (char *save = NULL, *c = strtok_r(cols, ",", &save); c; c = strtok_r(NULL, ",", &save)) {
        rt_status s = check_column(h, text_columns[i].table, c, kind, &o, err);
        if (s) return s;
      }
    }
  return RT_OK;
}
