/* html.h — the one writer of rooftune's HTML pages and their inline SVG charts (the report):
 * every element, attribute and text goes through it, so whatever a value holds (a database
 * field, a shape, a file name) is escaped by construction and can never become markup.
 *
 * Text is escaped (& < >), attribute values double-quoted and escaped (& < > " ' and the tab and
 * newline an attribute would fold), and on top of that:
 *   - text and attribute values are made valid UTF-8 first: an invalid or overlong sequence, a
 *     surrogate, a C0 control other than tab and newline and the non-characters U+FFFE and
 *     U+FFFF each become U+FFFD, so the page is valid UTF-8 (and well-formed XML) whatever the
 *     input bytes were;
 *   - element and attribute names are checked ([A-Za-z][A-Za-z0-9-]*, a namespace prefix for
 *     attributes): a name is code, never data;
 *   - what could run or fetch is refused outright: no attribute named on..., no "src" or
 *     "style" attribute, no href but a link inside the page ("#..."), no <script>, <iframe>,
 *     <object>, <embed>, <img>, <link>, <base>, <form>, <foreignObject> element; the only
 *     text written unescaped is the page's style sheet, which must be a string literal
 *     (html_style) and holds no '<' or '&';
 *   - HTML elements always get an end tag (<td></td>: a browser reads <td/> as an open <td>),
 *     void elements (meta, br) and SVG's element whose content is empty close themselves.
 * The output is HTML5 that is also well-formed XML, which is what the tests parse it with
 * (libxml2 and Python's expat, independent of this writer).  It is written here rather than
 * over libxml2's xmlTextWriter because the GPU build links its dependencies statically and a
 * static libxml2 brings ICU's tens of megabytes; the rules above are this file's.
 *
 * Calls return nothing: the first failure (a write error such as ENOSPC, a refused name or
 * attribute, an element closed too often) is kept and every later call does nothing;
 * html_finish reports it.  Charts are built from the SVG helpers below (one element each),
 * so a new kind of marker, legend or axis is a few calls, not new markup.
 */
#ifndef ROOFTUNE_JOB_HTML_H
#define ROOFTUNE_JOB_HTML_H

#include <stddef.h>
#include <stdio.h>

#include "core/status.h"

typedef struct html html;

/* A writer onto OUT (not closed by it); NULL when out of memory. */
html *html_new(FILE *out);
/* Closes every element still open, flushes onto the FILE and returns the first failure
 * (RT_ERR_IO for a write, RT_ERR_INTERNAL for a misuse, with the message). */
rt_status html_finish(html *h, rt_error *err);
/* Bytes written so far. */
long long html_bytes(const html *h);
void html_free(html *h);

/* ---- the page ---- */

/* <!DOCTYPE html>, first. */
void html_doctype(html *h);
/* <style>CSS</style>: CSS must be a string literal (the one text written as it is). */
#define html_style(h, css) html_style_literal_((h), "" css "")
void html_style_literal_(html *h, const char *css);

/* ---- elements ---- */

/* Opens <TAG ...>: attributes may follow until the first content or child. */
void html_open(html *h, const char *tag);
/* html_open and a class attribute (NULL or "" for none). */
void html_open_class(html *h, const char *tag, const char *cls);
/* Closes the innermost open element. */
void html_close(html *h);
/* <TAG class="CLS">TEXT</TAG> (cls may be NULL). */
void html_elem(html *h, const char *tag, const char *cls, const char *text);
/* The same with printf-formatted text. */
void html_elemf(html *h, const char *tag, const char *cls, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* A line break in the file (between elements; no effect on the page). */
void html_newline(html *h);

/* ---- attributes of the element just opened ---- */

void html_attr(html *h, const char *name, const char *value);
void html_attrf(html *h, const char *name, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* A coordinate or size: "%.1f" (a value that is not finite is written as 0). */
void html_attr_num(html *h, const char *name, double v);

/* ---- text ---- */

void html_text(html *h, const char *s);
void html_textf(html *h, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- SVG ---- */

/* <svg class=CLS xmlns=... width height viewBox="0 0 W H" role="img">; close with html_close. */
void svg_open(html *h, const char *cls, int width, int height);
/* <line class x1 y1 x2 y2/> */
void svg_line(html *h, const char *cls, double x1, double y1, double x2, double y2);
/* <rect class x y width height/>; html_close is the caller's (a <title> may go inside). */
void svg_rect_open(html *h, const char *cls, double x, double y, double w, double hgt);
/* <circle class cx cy r>; html_close is the caller's. */
void svg_circle_open(html *h, const char *cls, double cx, double cy, double r);
/* <path class d="M x y l ... z"> of a closed polygon through the (dx, dy) steps from (x, y);
 * html_close is the caller's. */
void svg_polygon_open(html *h, const char *cls, double x, double y, const double *steps,
                      size_t nsteps);
/* <polyline class points="x,y ..."/> over n points (xy: x0, y0, x1, y1, ...); clip: the id of
 * a clipPath, or NULL. */
void svg_polyline(html *h, const char *cls, const double *xy, size_t n, const char *clip);
/* The same left open (attributes may follow); html_close is the caller's. */
void svg_polyline_open(html *h, const char *cls, const double *xy, size_t n, const char *clip);
/* <text class x y text-anchor>TEXT</text>; anchor NULL: start. */
void svg_text(html *h, const char *cls, double x, double y, const char *anchor, const char *text);
/* <text class x y text-anchor> left open: attributes, then the text, then html_close. */
void svg_text_open(html *h, const char *cls, double x, double y, const char *anchor);
/* <title>TEXT</title>: a tooltip of the element open around it. */
void svg_title(html *h, const char *text);
void svg_titlef(html *h, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- for tests and fuzzing ---- */

/* S as the writer puts it on the page: valid UTF-8 (see above), malloc'ed; NULL on no memory. */
char *html_clean_utf8(const char *s);

#endif
