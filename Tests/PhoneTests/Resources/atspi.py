#!/usr/bin/python3
"""Reads and presses the Phone app's windows through AT-SPI, as a person (or a screen reader)
does. One step per run; waits for what it looks for until a deadline, re-reading the tree.

usage: atspi.py wait|click|gone|select|type|keys|scroll|dump NAME [--role ROLE] [--window TITLE] [--text TEXT] [--until FILE] [--timeout SECONDS]
  wait    until an object named NAME is there
  click   it, through its "click" action (buttons, toggle buttons)
  gone    until no object named NAME is left
  select  the page tab NAME in the view switcher (a press on it)
  type    TEXT into the text field NAME: focused, then typed key by key on the keyboard
  keys    the key NAME ("ctrl+f", "Return", "Escape"), or TEXT typed, on the keyboard, to the window
          that has the focus (with --window, once the window of that title is the active one)
  scroll  the mouse wheel down over the object NAME, a notch at a time, until the file --until exists
  dump    print the tree (NAME ignored)
Exit status 0 when done; 1 with the tree on stderr when the deadline passed.
"""
import argparse
import os
import sys
import time

import pyatspi

APP = "monkeycall-phone"

parser = argparse.ArgumentParser()
parser.add_argument("step", choices=["wait", "click", "gone", "select", "type", "keys", "scroll", "dump"])
parser.add_argument("name", nargs="?", default="")
parser.add_argument("--role")
parser.add_argument("--window")
parser.add_argument("--text", default="")
parser.add_argument("--until")
parser.add_argument("--timeout", type=float, default=20)
options = parser.parse_args()


def application():
    desktop = pyatspi.Registry.getDesktop(0)
    for index in range(desktop.childCount):
        app = desktop.getChildAtIndex(index)
        if app is not None and app.name == APP:
            return app
    return None


def showing(accessible):
    """GTK 4.8 sets SHOWING on windows only, and VISIBLE on a view switcher's hidden pages too:
    every object counts, and the tests look for names only one place has."""
    return True


def walk(accessible, depth=0):
    """The objects below `accessible`, depth first."""
    if accessible is None or depth > 60:
        return
    yield accessible
    # A window may close while it is walked (the call window, after a call ends): what is gone
    # is skipped, not an error.
    try:
        children = [accessible.getChildAtIndex(index) for index in range(accessible.childCount)]
    except Exception:
        return
    for child in children:
        try:
            wanted = child is not None and (showing(child) or child.getRoleName() == "frame")
        except Exception:
            continue
        if wanted:
            yield from walk(child, depth + 1)


def windows(app):
    for index in range(app.childCount):
        window = app.getChildAtIndex(index)
        if window is not None and (options.window is None or window.name == options.window):
            yield window


def matches():
    app = application()
    if app is None:
        return []
    found = []
    for window in windows(app):
        for accessible in walk(window):
            try:
                if accessible.name == options.name and (options.role is None or accessible.getRoleName() == options.role):
                    found.append(accessible)
            except Exception:
                pass
    return found


def dump(out):
    app = application()
    if app is None:
        print("(no monkeycall-phone on the AT-SPI bus)", file=out)
        return
    for window in windows(app):
        for accessible in walk(window):
            try:
                depth = 0
                parent = accessible.parent
                while parent is not None and parent != app and depth < 60:
                    depth += 1
                    parent = parent.parent
                if accessible.name or accessible.getRoleName() in ("frame", "list item", "push button", "toggle button", "label"):
                    print("  " * depth + f"[{accessible.getRoleName()}] {accessible.name!r}", file=out)
            except Exception:
                pass


def on_screen(accessible):
    """GTK acts on a press only once the widget is mapped; an unmapped one has no extents."""
    try:
        extents = accessible.queryComponent().getExtents(pyatspi.WINDOW_COORDS)
        return extents.width > 0 and extents.height > 0
    except Exception:
        return True


def press(accessible):
    if not on_screen(accessible):
        raise RuntimeError("not on screen yet")
    toggle = accessible.getRoleName() in ("toggle button", "check box")
    checked = toggle and accessible.getState().contains(pyatspi.STATE_CHECKED)
    action = accessible.queryAction()
    names = [action.getName(index) for index in range(action.nActions)]
    if names:
        action.doAction(next((names.index(name) for name in ("click", "press", "activate") if name in names), 0))
    else:
        # GTK 4.8 gives a check button no action: the pointer clicks it, as a person does.
        extents = accessible.queryComponent().getExtents(pyatspi.DESKTOP_COORDS)
        pyatspi.Registry.generateMouseEvent(extents.x + extents.width // 2, extents.y + extents.height // 2, "b1c")
    # GTK acts on a pressed button a moment later (GtkButton's activate shows the press for 250 ms
    # first): a toggle's press is done when its state has changed, and what it shows (the call
    # window's keypad) is there only then. Pressing a digit before that reached a keypad not yet
    # shown, and was lost.
    while toggle and accessible.getState().contains(pyatspi.STATE_CHECKED) == checked:
        if time.monotonic() > deadline:
            raise RuntimeError("the toggle did not change")
        time.sleep(0.02)


KEYSYMS = {"Return": 0xFF0D, "Escape": 0xFF1B, "BackSpace": 0xFF08}
MODIFIER_MASKS = {"shift": 1 << 0, "ctrl": 1 << 2, "alt": 1 << 3}


def press_keys(combination):
    """A key with its modifiers held ("ctrl+f"), as XTest gives them to the X server."""
    *modifiers, key = combination.split("+")
    mask = 0
    for modifier in modifiers:
        mask |= MODIFIER_MASKS[modifier]
    keysym = KEYSYMS[key] if key in KEYSYMS else ord(key)
    if mask:
        pyatspi.Registry.generateKeyboardEvent(mask, None, pyatspi.KEY_LOCKMODIFIERS)
    try:
        pyatspi.Registry.generateKeyboardEvent(keysym, None, pyatspi.KEY_SYM)
    finally:
        if mask:
            pyatspi.Registry.generateKeyboardEvent(mask, None, pyatspi.KEY_UNLOCKMODIFIERS)


def type_text(text):
    for character in text:
        # Backspace (\b) is its own keysym; any other character's keysym is its code point.
        keysym = KEYSYMS["BackSpace"] if character == "\b" else ord(character)
        pyatspi.Registry.generateKeyboardEvent(keysym, None, pyatspi.KEY_SYM)


def active_window():
    """The window the keyboard reaches: GTK marks the one the X server gave the focus ACTIVE."""
    app = application()
    if app is None:
        return None
    return next((window for window in windows(app) if window.getState().contains(pyatspi.STATE_ACTIVE)), None)


def scroll_until(accessible, stop_file):
    """Turns the wheel a notch at a time over `accessible` (XTest's button 5, as a mouse's wheel
    gives it) until the file `stop_file` exists: the test makes it when it has seen what it waits for."""
    if not on_screen(accessible):
        raise RuntimeError("not on screen yet")
    extents = accessible.queryComponent().getExtents(pyatspi.DESKTOP_COORDS)
    x, y = extents.x + extents.width // 2, extents.y + extents.height // 2
    pyatspi.Registry.generateMouseEvent(x, y, "abs")
    while not os.path.exists(stop_file):
        if time.monotonic() > deadline:
            raise RuntimeError(f"{stop_file} never came")
        pyatspi.Registry.generateMouseEvent(x, y, "b5c")
        time.sleep(0.05)


def type_into(accessible, text):
    """Focuses the field and types `text` as key presses (XTest through the registry), the way a
    person's keyboard reaches it: the app hears each key, and its search runs as it would."""
    if not on_screen(accessible):
        raise RuntimeError("not on screen yet")
    # A click into the field (GTK 4 implements no Component.GrabFocus): the pointer stays on the
    # window, where an X server without a window manager sends the keys.
    extents = accessible.queryComponent().getExtents(pyatspi.DESKTOP_COORDS)
    pyatspi.Registry.generateMouseEvent(extents.x + extents.width // 2, extents.y + extents.height // 2, "b1c")
    focus_deadline = time.monotonic() + 5
    while not accessible.getState().contains(pyatspi.STATE_FOCUSED):
        if time.monotonic() > focus_deadline:
            raise RuntimeError("the field took no focus")
        time.sleep(0.02)
    type_text(text)


def select(tabs):
    """Presses the page tab in every switcher that has it: the header's or the bottom bar's is on
    screen, depending on the window's width (GTK acts only on a widget that is)."""
    for tab in tabs:
        press(tab)


if options.step == "dump":
    dump(sys.stdout)
    sys.exit(0)

deadline = time.monotonic() + options.timeout
if options.step == "keys":
    while options.window is not None and (active_window() is None or active_window().name != options.window):
        if time.monotonic() > deadline:
            print(f"keys {options.name!r}: the window {options.window!r} never became the active one", file=sys.stderr)
            dump(sys.stderr)
            sys.exit(1)
        time.sleep(0.05)
    if options.text:
        type_text(options.text)
    else:
        press_keys(options.name)
    sys.exit(0)

while True:
    found = matches()
    if options.step == "gone":
        if not found:
            sys.exit(0)
    elif found:
        try:
            if options.step == "click":
                press(found[0])
            elif options.step == "type":
                type_into(found[0], options.text)
            elif options.step == "scroll":
                scroll_until(found[0], options.until)
            elif options.step == "select":
                if not any(tab.getState().contains(pyatspi.STATE_SELECTED) for tab in found):
                    select(found)
                    raise RuntimeError("not selected yet")
            sys.exit(0)
        except Exception as error:
            if options.step != "select" and "not on screen" not in str(error):
                print(f"{options.step} {options.name!r}: {error}", file=sys.stderr)
    if time.monotonic() > deadline:
        print(f"{options.step} {options.name!r} (role {options.role}) failed after {options.timeout} s; the showing tree:", file=sys.stderr)
        dump(sys.stderr)
        sys.exit(1)
    # Re-read the tree: AT-SPI answers from the app, which updates it as the model changes.
    time.sleep(0.1)
