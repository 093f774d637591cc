"""Checks the SVG files tl-opt --dump-layouts=svg wrote (test/Lower/dump-layouts-svg.test): each
parses as XML (xml.etree), and per file prints its root tag, the number of <rect class="cell">
(one per element of the window) and of <rect class="run">, and the labels of the cells named on
the command line as FILE:INDEX (the INDEX-th cell in document order, row-major)."""
import sys
import xml.etree.ElementTree as ET

NS = "{http://www.w3.org/2000/svg}"
directory, files, picks = sys.argv[1], sys.argv[2].split(","), sys.argv[3:]
for name in files:
    root = ET.parse(f"{directory}/{name}").getroot()
    rects = list(root.iter(NS + "rect"))
    cells = [r for r in rects if r.get("class") == "cell"]
    runs = [r for r in rects if r.get("class") == "run"]
    print(f"{name}: root={root.tag[len(NS):]} cells={len(cells)} runs={len(runs)}")
    # a cell's label is the <text> right after its <rect> in the cells group
    group = next(g for g in root.iter(NS + "g") if g.get("id") == "cells")
    kids = list(group)
    labels = [kids[i + 1].text for i, k in enumerate(kids) if k.get("class") == "cell"]
    for p in picks:
        f, idx = p.rsplit(":", 1)
        if f == name:
            print(f"{name}[{idx}] = {labels[int(idx)]} fill={cells[int(idx)].get('fill')}")
