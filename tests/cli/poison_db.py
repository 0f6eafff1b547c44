#!/usr/bin/env python3
"""Makes a rooftune database hostile, as a crafted shard that `job merge` would carry: appends a
script payload (a <script>, an <img onerror>, an <svg onload>, a javascript: link, markup that
closes what it is in) and invalid UTF-8 to every TEXT column of every row, CHECK constraints
ignored as a crafted file would.

    poison_db.py DB [--keep table.column,...] [--set TEXT]

--keep leaves those columns as they are (keys and statuses, so the rows are still the job's
problems and plot); --set replaces each value by TEXT instead (a payload short enough for the
fixed-size fields rooftune reads, e.g. '<svg onload=id=7>').  Prints how many columns it changed."""
import sqlite3
import sys

MARK = "document.documentElement.setAttribute('data-pwned','%s')"
PAYLOAD = ("<script>" + MARK % "script" + "</script>"
           "<img src=x onerror=\"" + MARK % "img" + "\">"
           "\"'><svg onload=\"" + MARK % "svg" + "\"></svg>"
           "<a href=\"javascript:" + MARK % "href" + "\">x</a>&amp;&lt;]]>").encode()
BAD_UTF8 = b"\xff\xfe\xc3\x28\xed\xa0\x80\xf8\x88\x80\x80\x80\x01\x1b[31m"


def main(argv):
    path, keep, value = argv[0], set(), None
    args = argv[1:]
    while args:
        if args[0] == "--keep":
            keep = set(args[1].split(","))
        elif args[0] == "--set":
            value = args[1].encode()
        else:
            sys.exit("poison_db.py: unknown argument %s" % args[0])
        args = args[2:]
    c = sqlite3.connect(path)
    c.execute("PRAGMA ignore_check_constraints = ON")
    tables = [r[0] for r in c.execute("SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%'")]
    took = 0
    for t in tables:
        for col in c.execute("PRAGMA table_info(%s)" % t).fetchall():
            name, ctype = col[1], (col[2] or "").upper()
            if "TEXT" not in ctype or "%s.%s" % (t, name) in keep:
                continue
            if value is None:
                c.execute("UPDATE %s SET %s = %s || CAST(? AS TEXT)" % (t, name, name), (PAYLOAD + BAD_UTF8,))
            else:
                c.execute("UPDATE OR IGNORE %s SET %s = CAST(? AS TEXT)" % (t, name), (value,))
            took += 1
    c.commit()
    print("poisoned %d text columns of %d tables" % (took, len(tables)))


if __name__ == "__main__":
    main(sys.argv[1:])
