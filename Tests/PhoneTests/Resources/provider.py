#!/usr/bin/python3
"""A VOIP app for the Phone app's end-to-end tests: registers as NAME, fulfils every action it
receives and prints one line per action with its arguments ("action play-dtmf UUID Digits=5"),
so that a test reads what the app was asked to do.

usage: provider.py BUS_ADDRESS [--name NAME] [--grouping] [--incoming UUID HANDLE [CALLER_NAME]]
                   [--then UUID HANDLE [CALLER_NAME]] [--missed UUID HANDLE]
  --grouping  its calls can be grouped (SupportsGrouping, SupportsUngrouping)
  --then      a second incoming call, reported once the first is answered
"""
import argparse

import dbus
import dbus.mainloop.glib
from gi.repository import GLib

BUS = "org.monkeycall.Telephony1"
ROOT = "/org/monkeycall/Telephony1"

parser = argparse.ArgumentParser()
parser.add_argument("address")
parser.add_argument("--name", default="PyPhone")
parser.add_argument("--incoming", nargs="+")
parser.add_argument("--then", nargs="+")
parser.add_argument("--grouping", action="store_true")
parser.add_argument("--missed", nargs=2)
options = parser.parse_args()

dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
bus = dbus.bus.BusConnection(options.address)
manager = dbus.Interface(bus.get_object(BUS, ROOT), BUS + ".Manager")
path = manager.RegisterProvider({"Name": options.name})
provider = dbus.Interface(bus.get_object(BUS, path), BUS + ".Provider")


def ring(incoming):
    update = {"Handle": incoming[1]}
    if len(incoming) > 2:
        update["LocalizedCallerName"] = incoming[2]
    if options.grouping:
        update["SupportsGrouping"] = True
        update["SupportsUngrouping"] = True
    provider.ReportNewIncomingCall(incoming[0], update)
    print(f"ringing {incoming[0]}", flush=True)


def perform(action, kind, call, args):
    shown = " ".join(f"{key}={args[key]}" for key in sorted(args) if key in ("Handle", "Digits", "Muted", "OnHold", "GroupWith"))
    print(f"action {kind} {call} {shown}".rstrip(), flush=True)
    provider.FulfillAction(action, {})
    if kind == "answer":
        print(f"answered {call}", flush=True)
        if options.then and call == options.incoming[0]:
            ring(options.then)


bus.add_signal_receiver(perform, "PerformAction", BUS + ".Provider", None, path)
print(f"registered {options.name} {path}", flush=True)
if options.incoming:
    ring(options.incoming)
if options.missed:
    provider.ReportNewIncomingCall(options.missed[0], {"Handle": options.missed[1]})
    provider.ReportCallEnded(options.missed[0], "unanswered", dbus.UInt64(0))
    print(f"missed {options.missed[0]}", flush=True)
GLib.MainLoop().run()
