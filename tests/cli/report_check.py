#!/usr/bin/env python3
"""Checks a report as a browser would meet it, with Python's own parsers (independent of
rooftune's writer): valid UTF-8; well-formed XML (expat); in the XML tree and in the tree
html.parser (HTML's rules) sees, only the elements the report writes, no event handler (on...),
no src or style attribute and no link out of the page.  With --text SUBSTRING (repeatable), each
must appear in the page's text: the hostile values reached the page, as text.  Prints one line
and exits 0, or prints why and exits 1."""
import html.parser
import sys
import xml.etree.ElementTree as ET

ALLOWED = {"html", "head", "meta", "title", "style", "body", "h1", "h2", "p", "span", "a", "table", "tr", "th",
           "td", "code", "section", "div", "svg", "defs", "clipPath", "clippath", "rect", "line", "text", "polyline",
           "circle", "path", "g"}


def bad_attr(tag, name, value):
    n = name.lower()
    if n.startswith("on") or n in ("src", "srcdoc", "style", "action", "formaction"):
        return "<%s %s=%r>" % (tag, name, value[:80])
    if (n == "href" or ":" in n) and not (value or "").startswith("#") and not n.startswith("xmlns"):
        return "<%s %s=%r>" % (tag, name, value[:80])
    return None


class Html(html.parser.HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.problems = []

    def handle_starttag(self, tag, attrs):
        if tag not in ALLOWED:
            self.problems.append("HTML tree: a <%s> element" % tag)
        for k, v in attrs:
            why = bad_attr(tag, k, v or "")
            if why:
                self.problems.append("HTML tree: " + why)


def check(path, texts):
    data = open(path, "rb").read()
    try:
        page = data.decode("utf-8", errors="strict")
    except UnicodeDecodeError as e:
        return "not valid UTF-8 at byte %d" % e.start
    try:
        root = ET.fromstring(data)
    except ET.ParseError as e:
        return "not well-formed XML: %s" % e
    for el in root.iter():
        tag = el.tag.split("}")[-1]
        if tag not in ALLOWED:
            return "XML tree: a <%s> element" % tag
        for k, v in el.attrib.items():
            why = bad_attr(tag, k.split("}")[-1], v)
            if why:
                return "XML tree: " + why
    h = Html()
    h.feed(page)
    h.close()
    if h.problems:
        return h.problems[0]
    text = "".join(root.itertext())
    for t in texts:
        if t not in text:
            return "the page's text lacks %r" % t
    return None


def main():
    args, texts = sys.argv[1:], []
    while "--text" in args:
        i = args.index("--text")
        texts.append(args[i + 1])
        del args[i:i + 2]
    why = check(args[0], texts)
    if why:
        print("FAIL: %s: %s" % (args[0], why))
        return 1
    print("%s: valid UTF-8, well-formed, only the report's elements, no handler or outside link" % args[0])
    return 0


if __name__ == "__main__":
    sys.exit(main())
