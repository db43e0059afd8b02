#!/usr/bin/env python3
"""html_dom.py DOM_FILE: what t_html.sh checks of a page as a browser
rendered it (Chromium's --dump-dom), one fact per line, tab-separated:
  section ID                       each <section id>, in order
  element NAME N                   how many script, link, img, iframe,
                                   object, embed, base elements there are
  external N                       attributes that load something (src,
                                   href, srcset, action, url( in styles)
  timeline KIND NAME WINDOW BUCKETS RAN FAILED SKIPPED MISSED LABEL
                                   each svg.timeline: its row's data-KIND
                                   (as text), data-window, its g.bucket
                                   count, its rect.mark count per kind, its
                                   aria-label
  rowname KIND TEXT                each timeline row's header, as text
Standard library only."""
import sys
from html.parser import HTMLParser

WATCH = ("script", "link", "img", "iframe", "object", "embed", "base")


class Dom(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.out = []
        self.counts = {name: 0 for name in WATCH}
        self.external = 0
        self.row = None          # (kind, name) of the timeline row we are in
        self.svg = None          # the svg.timeline being read
        self.th = None           # text of the row header being read
        self.in_style = False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        classes = (a.get("class") or "").split()
        if tag in self.counts:
            self.counts[tag] += 1
        for k, v in attrs:
            if k in ("src", "href", "srcset", "action", "xlink:href") and v:
                self.external += 1
            if k == "style" and v and "url(" in v:
                self.external += 1
        if tag == "style":
            self.in_style = True
        if tag == "section" and "id" in a:
            self.out.append(("section", a["id"]))
        if tag == "tr" and "timeline" in classes:
            for kind in ("queue", "schedule"):
                if "data-" + kind in a:
                    self.row = (kind, a["data-" + kind])
        if tag == "th" and self.row and self.svg is None:
            self.th = ""
        if tag == "svg" and "timeline" in classes:
            self.svg = {"window": a.get("data-window", "?"), "buckets": 0,
                        "label": a.get("aria-label", ""),
                        "ran": 0, "failed": 0, "skipped": 0, "missed": 0}
        if self.svg is not None and tag == "g" and "bucket" in classes:
            self.svg["buckets"] += 1
        if self.svg is not None and tag == "rect" and "mark" in classes:
            for kind in ("ran", "failed", "skipped", "missed"):
                if kind in classes:
                    self.svg[kind] += 1

    def handle_endtag(self, tag):
        if tag == "style":
            self.in_style = False
        if tag == "th" and self.th is not None:
            self.out.append(("rowname", self.row[0], self.th))
            self.th = None
        if tag == "svg" and self.svg is not None:
            s = self.svg
            kind, name = self.row if self.row else ("?", "?")
            self.out.append(("timeline", kind, name, s["window"], str(s["buckets"]), str(s["ran"]),
                             str(s["failed"]), str(s["skipped"]), str(s["missed"]), s["label"]))
            self.svg = None
        if tag == "tr":
            self.row = None

    def handle_data(self, data):
        if self.th is not None:
            self.th += data
        if self.in_style and "url(" in data:
            self.external += 1


def main():
    with open(sys.argv[1], encoding="utf-8") as f:
        d = Dom()
        d.feed(f.read())
        d.close()
    for line in d.out:
        print("\t".join(line))
    for name in WATCH:
        print("element\t%s\t%d" % (name, d.counts[name]))
    print("external\t%d" % d.external)


main()
