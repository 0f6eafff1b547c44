/* html_check.h — the report's safety as a browser would see it, checked with libxml2's parsers
 * (independent of job/html.c, the writer under test): a page passes when
 *   - it is valid UTF-8 throughout;
 *   - libxml2's XML parser reads it without an error (a value that escaped its escaping breaks
 *     well-formedness or adds an element);
 *   - in the XML tree and in the tree libxml2's HTML parser builds (HTML's rules: raw text in
 *     <title> and <style>, implied end tags) every element is one the report writes
 *     (html_check_allowed), no attribute is an event handler (on...), src, style or a link out
 *     of the page (href or a namespaced attribute such as xlink:href not starting with '#').
 * html_check_text collects the page's text (the XML tree's text nodes), so a test can see that a
 * payload reached the page as text.  Needs libxml2 (RT_HAVE_LIBXML2); without it the checks are
 * not available and the tests that need them skip. */
#ifndef ROOFTUNE_TEST_HTML_CHECK_H
#define ROOFTUNE_TEST_HTML_CHECK_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#if RT_HAVE_LIBXML2
#include <libxml/HTMLparser.h>
#include <libxml/parser.h>
#include <libxml/tree.h>

/* The elements the report writes. */
static const char *const html_check_allowed[] = {
    "html",     "head",     "meta", "title", "style", "body",     "h1",      "h2",   "p",   "span",
    "a",        "table",    "tr",   "th",    "td",    "code",     "section", "div",  "svg", "defs",
    "clipPath", "clippath", "rect", "line",  "text",  "polyline", "circle",  "path", "g",   NULL};

static int html_check_utf8(const unsigned char *s, size_t n, size_t *bad_at) {
  for (size_t i = 0; i < n;) {
    unsigned c = s[i];
    size_t k = c < 0x80                   ? 1
               : (c >= 0xc2 && c <= 0xdf) ? 2
               : (c >= 0xe0 && c <= 0xef) ? 3
               : (c >= 0xf0 && c <= 0xf4) ? 4
                                          : 0;
    if (!k || i + k > n) return *bad_at = i, 0;
    for (size_t j = 1; j < k; j++)
      if ((s[i + j] & 0xc0) != 0x80) return *bad_at = i, 0;
    if (k == 3 && ((c == 0xe0 && s[i + 1] < 0xa0) || (c == 0xed && s[i + 1] >= 0xa0)))
      return *bad_at = i, 0;
    if (k == 4 && ((c == 0xf0 && s[i + 1] < 0x90) || (c == 0xf4 && s[i + 1] >= 0x90)))
      return *bad_at = i, 0;
    i += k;
  }
  return 1;
}

static void html_check_silent(void *ctx, const char *msg, ...) {
  (void)ctx;
  (void)msg;
}

/* Walks a tree: 0 when it is safe, else -1 with the reason in why. */
static int html_check_tree(xmlNode *n, const char *tree, char *why, size_t size) {
  for (; n; n = n->next) {
    if (n->type == XML_ELEMENT_NODE) {
      int ok = 0;
      for (int i = 0; html_check_allowed[i]; i++)
        ok |= !strcmp((const char *)n->name, html_check_allowed[i]);
      if (!ok)
        return snprintf(why, size, "%s tree: a <%.60s> element", tree, (const char *)n->name), -1;
      for (xmlAttr *a = n->properties; a; a = a->next) {
        const char *an = (const char *)a->name;
        xmlChar *v = xmlNodeGetContent((xmlNode *)a);
        const char *vs = v ? (const char *)v : "";
        int bad = !strncasecmp(an, "on", 2) || !strcasecmp(an, "src") || !strcasecmp(an, "style") ||
                  ((!strcasecmp(an, "href") || strchr(an, ':')) && vs[0] != '#');
        if (bad)
          snprintf(why, size, "%s tree: <%s %s=\"%.80s\">", tree, (const char *)n->name, an, vs);
        xmlFree(v);
        if (bad) return -1;
      }
    }
    if (n->children && html_check_tree(n->children, tree, why, size)) return -1;
  }
  return 0;
}

static void html_check_collect(xmlNode *n, char **buf, size_t *len) {
  for (; n; n = n->next) {
    if (n->type == XML_TEXT_NODE && n->content) {
      size_t k = strlen((const char *)n->content);
      char *g = realloc(*buf, *len + k + 1);
      if (!g) return;
      *buf = g;
      memcpy(*buf + *len, n->content, k + 1);
      *len += k;
    }
    if (n->children) html_check_collect(n->children, buf, len);
  }
}

/* 0 when PAGE (n bytes) is safe by the rules above, else -1 with the reason in why.  *text, when
 * not NULL, gets the XML tree's text (malloc'ed). */
static int html_check(const char *page, size_t n, char **text, char *why, size_t size) {
  if (text) *text = NULL;
  size_t at = 0;
  if (!html_check_utf8((const unsigned char *)page, n, &at))
    return snprintf(why, size, "not valid UTF-8 at byte %zu", at), -1;
  xmlSetGenericErrorFunc(NULL, html_check_silent);
  xmlDoc *x = xmlReadMemory(page, (int)n, "report.html", "UTF-8",
                            XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
  if (!x) {
    const xmlError *e = xmlGetLastError();
    return snprintf(why, size, "not well-formed: line %d: %s", e ? e->line : 0,
                    e && e->message ? e->message : "?"),
           -1;
  }
  int rc = html_check_tree(xmlDocGetRootElement(x), "XML", why, size);
  if (!rc && text) {
    size_t len = 0;
    html_check_collect(xmlDocGetRootElement(x), text, &len);
  }
  xmlFreeDoc(x);
  if (rc) return rc;
  htmlDocPtr hd = htmlReadMemory(page, (int)n, "report.html", "UTF-8",
                                 HTML_PARSE_NONET | HTML_PARSE_NOERROR | HTML_PARSE_NOWARNING);
  if (!hd) return snprintf(why, size, "the HTML parser read nothing"), -1;
  rc = html_check_tree(xmlDocGetRootElement(hd), "HTML", why, size);
  xmlFreeDoc(hd);
  return rc;
}
#endif

#endif
