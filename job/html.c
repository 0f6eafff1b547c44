/* html.c — the HTML and SVG writer (see html.h). */
#include "job/html.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define HTML_DEPTH_MAX 64
#define HTML_NAME_MAX  24

struct html {
  FILE *out;                               /* where the bytes go */
  long long bytes;                         /* written so far */
  int depth;                               /* elements open */
  char tag[HTML_DEPTH_MAX][HTML_NAME_MAX]; /* their names */
  unsigned char svg[HTML_DEPTH_MAX];       /* 1: an SVG element (closes itself when empty) */
  unsigned char vacant[HTML_DEPTH_MAX];    /* 1: a void HTML element (meta, br) */
  int in_start;  /* the innermost element's start tag is open: attributes may follow */
  rt_status st;  /* the first failure */
  char msg[256]; /* what failed */
};

/* ---- UTF-8 ---- */

/* The length of the valid, allowed character at s (1 to 4), or 0 when it must be replaced. */
static int utf8_char(const unsigned char *s) {
  unsigned c = s[0];
  if (c < 0x80) return c >= 0x20 || c == '\t' || c == '\n' ? 1 : 0;
  int n;
  uint32_t cp;
  if (c >= 0xc2 && c <= 0xdf)
    n = 2, cp = c & 0x1f;
  else if (c >= 0xe0 && c <= 0xef)
    n = 3, cp = c & 0x0f;
  else if (c >= 0xf0 && c <= 0xf4)
    n = 4, cp = c & 0x07;
  else
    return 0; /* a continuation byte, an overlong lead (c0, c1) or past U+10FFFF */
  for (int i = 1; i < n; i++) {
    if ((s[i] & 0xc0) != 0x80) return 0;
    cp = cp << 6 | (s[i] & 0x3f);
  }
  if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)))
    return 0;                                 /* overlong */
  if (cp >= 0xd800 && cp <= 0xdfff) return 0; /* a surrogate */
  if (cp == 0xfffe || cp == 0xffff) return 0; /* not XML */
  return n;
}

char *html_clean_utf8(const char *s) {
  if (!s) s = "";
  size_t len = strlen(s);
  char *out = malloc(3 * len + 1); /* each refused byte becomes three */
  if (!out) return NULL;
  size_t n = 0;
  for (const unsigned char *p = (const unsigned char *)s; *p;) {
    int k = utf8_char(p);
    if (k) {
      memcpy(out + n, p, (size_t)k);
      n += (size_t)k;
      p += k;
    } else {
      memcpy(out + n, "\xef\xbf\xbd", 3); /* U+FFFD */
      n += 3;
      p++;
    }
  }
  out[n] = '\0';
  return out;
}

/* ---- failures and bytes ---- */

static void fail(html *h, rt_status st, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void fail(html *h, rt_status st, const char *fmt, ...) {
  if (h->st) return;
  h->st = st;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(h->msg, sizeof h->msg, fmt, ap);
  va_end(ap);
}

/* Writes n bytes that are markup or already escaped. */
static void put(html *h, const char *s, size_t n) {
  if (h->st || n == 0) return;
  if (fwrite(s, 1, n, h->out) != n) {
    fail(h, RT_ERR_IO, "cannot write the page: %s", strerror(errno ? errno : EIO));
    return;
  }
  h->bytes += (long long)n;
}

static void puts_(html *h, const char *s) { put(h, s, strlen(s)); }

/* Writes s (valid UTF-8 already) escaped for text (& < >) or, with attr, for a double-quoted
 * attribute value (also " ' and the white space an attribute would fold). */
static void put_escaped(html *h, const char *s, int attr) {
  const char *run = s;
  for (; *s; s++) {
    const char *e = NULL;
    switch (*s) {
      case '&': e = "&amp;"; break;
      case '<': e = "&lt;"; break;
      case '>': e = "&gt;"; break;
      case '"': e = attr ? "&quot;" : NULL; break;
      case '\'': e = attr ? "&#39;" : NULL; break;
      case '\n': e = attr ? "&#10;" : NULL; break;
      case '\t': e = attr ? "&#9;" : NULL; break;
      default: break;
    }
    if (!e) continue;
    put(h, run, (size_t)(s - run));
    puts_(h, e);
    run = s + 1;
  }
  put(h, run, (size_t)(s - run));
}

/* The innermost element gets content: its start tag ends. */
static void end_start_tag(html *h) {
  if (!h->in_start) return;
  puts_(h, ">");
  h->in_start = 0;
}

/* ---- the writer ---- */

html *html_new(FILE *out) {
  html *h = calloc(1, sizeof *h);
  if (h) h->out = out;
  return h;
}

rt_status html_finish(html *h, rt_error *err) {
  while (!h->st && h->depth > 0) html_close(h);
  if (!h->st && fflush(h->out) != 0)
    fail(h, RT_ERR_IO, "cannot write the page: %s", strerror(errno));
  if (h->st) return rt_error_set(err, h->st, "%s", h->msg);
  return RT_OK;
}

long long html_bytes(const html *h) { return h->bytes; }

void html_free(html *h) { free(h); }

void html_doctype(html *h) {
  if (h->depth || h->bytes) fail(h, RT_ERR_INTERNAL, "the doctype comes first");
  puts_(h, "<!DOCTYPE html>\n");
}

void html_newline(html *h) {
  end_start_tag(h);
  puts_(h, "\n");
}

/* ---- names ---- */

static int name_ok(const char *s, int attribute) {
  if (!s || !((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z'))) return 0;
  int colons = 0;
  for (s++; *s; s++) {
    if (*s == ':' && attribute && !colons++) continue;
    if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
          *s == '-'))
      return 0;
  }
  return 1;
}

/* Elements that run, embed or fetch something: never written. */
static const char *const refused_tags[] = {
    "script", "iframe", "frame",  "frameset", "object",  "embed",  "img",
    "image",  "link",   "base",   "form",     "input",   "button", "foreignObject",
    "audio",  "video",  "source", "use",      "animate", "set",    NULL};
/* Attributes that fetch or carry code (besides every on...). */
static const char *const refused_attrs[] = {"src",        "srcset",     "srcdoc",     "style",
                                            "action",     "formaction", "data",       "xlink:href",
                                            "background", "poster",     "http-equiv", NULL};
static const char *const void_tags[] = {"meta", "br", "hr", "wbr", "col", NULL};

static int in_list(const char *s, const char *const *list) {
  for (int i = 0; list[i]; i++)
    if (!strcasecmp(s, list[i])) return 1;
  return 0;
}

void html_open(html *h, const char *tag) {
  if (h->st) return;
  if (!name_ok(tag, 0) || strlen(tag) >= HTML_NAME_MAX || in_list(tag, refused_tags)) {
    fail(h, RT_ERR_INTERNAL, "the page writer does not write a <%.40s> element", tag ? tag : "");
    return;
  }
  if (h->depth == HTML_DEPTH_MAX) {
    fail(h, RT_ERR_INTERNAL, "elements nested deeper than %d", HTML_DEPTH_MAX);
    return;
  }
  end_start_tag(h);
  int svg = !strcmp(tag, "svg") || (h->depth > 0 && h->svg[h->depth - 1]);
  memcpy(h->tag[h->depth], tag, strlen(tag) + 1);
  h->svg[h->depth] = (unsigned char)svg;
  h->vacant[h->depth] = (unsigned char)(!svg && in_list(tag, void_tags));
  h->depth++;
  puts_(h, "<");
  puts_(h, tag);
  h->in_start = 1;
}

void html_open_class(html *h, const char *tag, const char *cls) {
  html_open(h, tag);
  if (cls && *cls) html_attr(h, "class", cls);
}

void html_close(html *h) {
  if (h->st) return;
  if (h->depth == 0) {
    fail(h, RT_ERR_INTERNAL, "an element closed that was not open");
    return;
  }
  h->depth--;
  if (h->in_start && (h->svg[h->depth] || h->vacant[h->depth])) {
    puts_(h, "/>"); /* SVG's empty elements and HTML's void ones close themselves */
  } else {
    if (h->vacant[h->depth]) {
      fail(h, RT_ERR_INTERNAL, "a <%s> has no content", h->tag[h->depth]);
      return;
    }
    end_start_tag(h);
    puts_(h, "</");
    puts_(h, h->tag[h->depth]);
    puts_(h, ">");
  }
  h->in_start = 0;
}

void html_attr(html *h, const char *name, const char *value) {
  if (h->st) return;
  if (!h->in_start) {
    fail(h, RT_ERR_INTERNAL, "attribute %.40s comes after its element's content", name ? name : "");
    return;
  }
  if (!name_ok(name, 1) || !strncasecmp(name, "on", 2) || in_list(name, refused_attrs)) {
    fail(h, RT_ERR_INTERNAL, "the page writer does not write a %.40s attribute", name ? name : "");
    return;
  }
  if (!strcasecmp(name, "href") && (!value || value[0] != '#')) {
    fail(h, RT_ERR_INTERNAL, "a link goes to a place in the page (#...), not to %.60s",
         value ? value : "");
    return;
  }
  char *v = html_clean_utf8(value);
  if (!v) {
    fail(h, RT_ERR_NOMEM, "out of memory writing the page");
    return;
  }
  puts_(h, " ");
  puts_(h, name);
  puts_(h, "=\"");
  put_escaped(h, v, 1);
  puts_(h, "\"");
  free(v);
}

/* vsnprintf into a malloc'ed string (NULL on no memory). */
static char *vformat(const char *fmt, va_list ap) {
  va_list aq;
  va_copy(aq, ap);
  int n = vsnprintf(NULL, 0, fmt, aq);
  va_end(aq);
  if (n < 0) return NULL;
  char *s = malloc((size_t)n + 1);
  if (s) vsnprintf(s, (size_t)n + 1, fmt, ap);
  return s;
}

/* The printf-style variants: FMT's text made, then CALL (the plain function, given s) with it. */
#define WITH_FORMATTED(h, fmt, call)                           \
  do {                                                         \
    if ((h)->st) return;                                       \
    va_list ap;                                                \
    va_start(ap, fmt);                                         \
    char *s = vformat(fmt, ap);                                \
    va_end(ap);                                                \
    if (!s)                                                    \
      fail(h, RT_ERR_NOMEM, "out of memory writing the page"); \
    else                                                       \
      call;                                                    \
    free(s);                                                   \
  } while (0)

void html_attrf(html *h, const char *name, const char *fmt, ...) {
  WITH_FORMATTED(h, fmt, html_attr(h, name, s));
}

void html_attr_num(html *h, const char *name, double v) {
  html_attrf(h, name, "%.1f", isfinite(v) ? v : 0.0);
}

void html_text(html *h, const char *s) {
  if (h->st || !s || !*s) return;
  if (h->depth == 0) {
    fail(h, RT_ERR_INTERNAL, "text outside every element");
    return;
  }
  if (h->vacant[h->depth - 1]) {
    fail(h, RT_ERR_INTERNAL, "a <%s> has no content", h->tag[h->depth - 1]);
    return;
  }
  char *v = html_clean_utf8(s);
  if (!v) {
    fail(h, RT_ERR_NOMEM, "out of memory writing the page");
    return;
  }
  end_start_tag(h);
  put_escaped(h, v, 0);
  free(v);
}

void html_textf(html *h, const char *fmt, ...) { WITH_FORMATTED(h, fmt, html_text(h, s)); }

void html_elem(html *h, const char *tag, const char *cls, const char *text) {
  html_open_class(h, tag, cls);
  html_text(h, text);
  html_close(h);
}

void html_elemf(html *h, const char *tag, const char *cls, const char *fmt, ...) {
  WITH_FORMATTED(h, fmt, html_elem(h, tag, cls, s));
}

void html_style_literal_(html *h, const char *css) {
  if (strchr(css, '<') || strchr(css, '&')) {
    fail(h, RT_ERR_INTERNAL, "a style sheet holds no '<' or '&'");
    return;
  }
  html_open(h, "style");
  end_start_tag(h);
  puts_(h, css); /* a string literal of the program's (html.h), checked above */
  html_close(h);
}

/* ---- SVG ---- */

void svg_open(html *h, const char *cls, int width, int height) {
  html_open_class(h, "svg", cls);
  html_attr(h, "xmlns", "http://www.w3.org/2000/svg");
  html_attrf(h, "width", "%d", width);
  html_attrf(h, "height", "%d", height);
  html_attrf(h, "viewBox", "0 0 %d %d", width, height);
  html_attr(h, "role", "img");
}

void svg_line(html *h, const char *cls, double x1, double y1, double x2, double y2) {
  html_open_class(h, "line", cls);
  html_attr_num(h, "x1", x1);
  html_attr_num(h, "y1", y1);
  html_attr_num(h, "x2", x2);
  html_attr_num(h, "y2", y2);
  html_close(h);
}

void svg_rect_open(html *h, const char *cls, double x, double y, double w, double hgt) {
  html_open_class(h, "rect", cls);
  html_attr_num(h, "x", x);
  html_attr_num(h, "y", y);
  html_attr_num(h, "width", w);
  html_attr_num(h, "height", hgt);
}

void svg_circle_open(html *h, const char *cls, double cx, double cy, double r) {
  html_open_class(h, "circle", cls);
  html_attr_num(h, "cx", cx);
  html_attr_num(h, "cy", cy);
  html_attr_num(h, "r", r);
}

/* A growing string of coordinates. */
typedef struct coords {
  char *s;
  size_t len, cap;
  int oom;
} coords;

/* Appends TEXT. */
static void coords_lit(coords *c, const char *text) {
  size_t n = strlen(text);
  if (c->oom) return;
  if (c->len + n + 1 > c->cap) {
    size_t cap = c->cap ? 2 * c->cap : 256;
    while (cap < c->len + n + 1) cap *= 2;
    char *g = realloc(c->s, cap);
    if (!g) {
      c->oom = 1;
      return;
    }
    c->s = g;
    c->cap = cap;
  }
  memcpy(c->s + c->len, text, n + 1);
  c->len += n;
}

/* Appends PREFIX and "%.1f" of v (0 when not finite). */
static void coords_add(coords *c, const char *prefix, double v) {
  char t[64];
  snprintf(t, sizeof t, "%s%.1f", prefix, isfinite(v) ? v : 0.0);
  coords_lit(c, t);
}

/* Writes the coordinates as attribute NAME and frees them. */
static void coords_attr(html *h, const char *name, coords *c) {
  if (c->oom)
    fail(h, RT_ERR_NOMEM, "out of memory writing the page");
  else
    html_attr(h, name, c->s ? c->s : "");
  free(c->s);
}

void svg_polygon_open(html *h, const char *cls, double x, double y, const double *steps,
                      size_t nsteps) {
  html_open_class(h, "path", cls);
  coords c = {0};
  coords_add(&c, "M", x);
  coords_add(&c, " ", y);
  for (size_t i = 0; i < nsteps; i++) {
    coords_add(&c, "l", steps[2 * i]);
    coords_add(&c, " ", steps[2 * i + 1]);
  }
  coords_lit(&c, "z");
  coords_attr(h, "d", &c);
}

void svg_polyline(html *h, const char *cls, const double *xy, size_t n, const char *clip) {
  svg_polyline_open(h, cls, xy, n, clip);
  html_close(h);
}

void svg_polyline_open(html *h, const char *cls, const double *xy, size_t n, const char *clip) {
  html_open_class(h, "polyline", cls);
  if (clip) html_attrf(h, "clip-path", "url(#%s)", clip);
  coords c = {0};
  for (size_t i = 0; i < n; i++) {
    coords_add(&c, i ? " " : "", xy[2 * i]);
    coords_add(&c, ",", xy[2 * i + 1]);
  }
  coords_attr(h, "points", &c);
}

void svg_text_open(html *h, const char *cls, double x, double y, const char *anchor) {
  html_open_class(h, "text", cls);
  html_attr_num(h, "x", x);
  html_attr_num(h, "y", y);
  if (anchor) html_attr(h, "text-anchor", anchor);
}

void svg_text(html *h, const char *cls, double x, double y, const char *anchor, const char *text) {
  svg_text_open(h, cls, x, y, anchor);
  html_text(h, text);
  html_close(h);
}

void svg_title(html *h, const char *text) { html_elem(h, "title", NULL, text); }

void svg_titlef(html *h, const char *fmt, ...) { WITH_FORMATTED(h, fmt, svg_title(h, s)); }
