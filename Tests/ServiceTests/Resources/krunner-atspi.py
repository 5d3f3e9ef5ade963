#!/usr/bin/python3
"""Reads KRunner's window through AT-SPI, as a screen reader does, and clicks a row of it with the
pointer, as a person does. One step per run; waits until a deadline, re-reading the tree.

usage: krunner-atspi.py rows NAME [--timeout SECONDS]   # once a row named NAME is listed: every row, as JSON
       krunner-atspi.py click NAME [--timeout SECONDS]  # a pointer click on the middle of the row named NAME
Each row: its name (the match's text), description ("subtext, in category RUNNER"), the labels
drawn in it (the runner's name heads a category's first row; the text; the subtext) and where it
is on the screen. Exit status 0 when done; 1 with the tree on stderr when the deadline passed.
"""
import argparse
import json
import sys
import time

import pyatspi

parser = argparse.ArgumentParser()
parser.add_argument("step", choices=["rows", "click"])
parser.add_argument("name")
parser.add_argument("--timeout", type=float, default=20)
options = parser.parse_args()


def walk(accessible, depth=0):
    if accessible is None or depth > 40:
        return
    yield accessible, depth
    try:
        children = [accessible.getChildAtIndex(index) for index in range(accessible.childCount)]
    except Exception:
        return
    for child in children:
        yield from walk(child, depth + 1)


def krunner():
    desktop = pyatspi.Registry.getDesktop(0)
    for index in range(desktop.childCount):
        app = desktop.getChildAtIndex(index)
        if app is not None and app.name == "krunner":
            return app
    return None


def rows():
    app = krunner()
    found = []
    for accessible, _ in walk(app):
        try:
            if accessible.getRoleName() != "list item" or not accessible.getState().contains(pyatspi.STATE_SHOWING):
                continue
            extents = accessible.queryComponent().getExtents(pyatspi.DESKTOP_COORDS)
            labels = [accessible.getChildAtIndex(index).name for index in range(accessible.childCount)]
            found.append({"name": accessible.name, "description": accessible.description, "labels": labels,
                          "x": extents.x, "y": extents.y, "width": extents.width, "height": extents.height})
        except Exception:
            pass
    return found


def dump(out):
    app = krunner()
    if app is None:
        print("(no krunner on the AT-SPI bus)", file=out)
        return
    for accessible, depth in walk(app):
        try:
            print("  " * depth + f"[{accessible.getRoleName()}] {accessible.name!r} {accessible.description!r}", file=out)
        except Exception:
            pass


deadline = time.monotonic() + options.timeout
while True:
    listed = rows()
    row = next((row for row in listed if row["name"] == options.name and row["width"] > 0), None)
    if row is not None:
        break
    if time.monotonic() > deadline:
        print(f"no row named {options.name!r} within {options.timeout} s; KRunner's tree:", file=sys.stderr)
        dump(sys.stderr)
        sys.exit(1)
    time.sleep(0.05)

if options.step == "rows":
    print(json.dumps(listed))
else:
    # A click (press and release of button 1) at the row's middle, through XTest on the X server.
    pyatspi.Registry.generateMouseEvent(row["x"] + row["width"] // 2, row["y"] + row["height"] // 2, "b1c")
    print(json.dumps(row))
