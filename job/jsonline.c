/* jsonline.c — the line of a value in a JSON text (see jsonline.h). */
#include "job/jsonline.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

typedef struct scan {
  const char *s; /* the next character */
  int line;      /* its line, 1-based */
} scan;

static void ws(scan *sc) {
  while (*sc->s && isspace((unsigned char)*sc->s)) {
    if (*sc->s == '\n') sc->line++;
    sc->s++;
  }
}

/* At '"': past the closing quote; the raw text between the quotes (escapes kept as "\x" → x)
 * into buf when it is not NULL. */
static void string_at(scan *sc, char *buf, size_t size) {
  size_t n = 0;
  if (*sc->s != '"') return;
  sc->s++;
  while (*sc->s && *sc->s != '"') {
    char c = *sc->s++;
    if (c == '\\' && *sc->s) c = *sc->s++;
    if (c == '\n') sc->line++;
    if (buf && n + 1 < size) buf[n++] = c;
  }
  if (*sc->s == '"') sc->s++;
  if (buf && size) buf[n] = 0;
}

static void skip_value(scan *sc) {
  ws(sc);
  char c = *sc->s;
  if (c == '"') {
    string_at(sc, NULL, 0);
  } else if (c == '{' || c == '[') {
    int depth = 0;
    do {
      c = *sc->s;
      if (c == '"') {
        string_at(sc, NULL, 0);
        continue;
      }
      if (c == '{' || c == '[')
        depth++;
      else if (c == '}' || c == ']')
        depth--;
      else if (c == '\n')
        sc->line++;
      if (c) sc->s++;
    } while (*sc->s && depth > 0);
  } else {
    while (*sc->s && !strchr(",}] \t\r\n", *sc->s)) sc->s++;
  }
}

/* The next step of path p: a key (into key, returns 1) or an index (into *idx, returns 2);
 * 0 at the end.  Advances *p. */
static int next_step(const char **p, char *key, size_t size, long *idx) {
  const char *s = *p;
  if (*s == '.') s++;
  if (!*s) return 0;
  if (*s == '[') {
    *idx = strtol(s + 1, (char **)&s, 10);
    if (*s == ']') s++;
    *p = s;
    return 2;
  }
  size_t n = 0;
  while (*s && *s != '.' && *s != '[') {
    if (n + 1 < size) key[n++] = *s;
    s++;
  }
  key[n] = 0;
  *p = s;
  return 1;
}

/* Walks sc along PATH; returns 1 at the value it names (sc on it), or 0 with *found the line of
 * the innermost value on the way. */
static int walk(scan *sc, const char *path, int *found) {
  ws(sc);
  *found = sc->line; /* the innermost value reached so far */
  const char *p = path ? path : "";
  char key[128], k[128];
  long idx = 0;
  int step;
  while ((step = next_step(&p, key, sizeof key, &idx)) != 0) {
    ws(sc);
    *found = sc->line;
    if (step == 1) {
      if (*sc->s != '{') return 0;
      sc->s++;
      for (;;) {
        ws(sc);
        if (*sc->s != '"') return 0;
        string_at(sc, k, sizeof k);
        ws(sc);
        if (*sc->s == ':') sc->s++;
        ws(sc);
        if (strcmp(k, key) == 0) break;
        skip_value(sc);
        ws(sc);
        if (*sc->s != ',') return 0;
        sc->s++;
      }
    } else {
      if (*sc->s != '[') return 0;
      sc->s++;
      for (long i = 0;; i++) {
        ws(sc);
        if (*sc->s == ']' || !*sc->s) return 0;
        if (i == idx) break;
        skip_value(sc);
        ws(sc);
        if (*sc->s != ',') return 0;
        sc->s++;
      }
    }
  }
  ws(sc);
  return 1;
}

int jsonline_find(const char *text, const char *path) {
  if (!text) return 0;
  scan sc = {text, 1};
  int found;
  return walk(&sc, path, &found) ? sc.line : found;
}

size_t jsonline_elements(const char *text, const char *path, int *lines, size_t n) {
  if (!text) return 0;
  scan sc = {text, 1};
  int found;
  if (!walk(&sc, path, &found) || *sc.s != '[') return 0;
  sc.s++;
  size_t i = 0;
  for (;; i++) {
    ws(&sc);
    if (*sc.s == ']' || !*sc.s) break;
    if (i < n) lines[i] = sc.line;
    skip_value(&sc);
    ws(&sc);
    if (*sc.s != ',') {
      i++;
      break;
    }
    sc.s++;
  }
  return i;
}
