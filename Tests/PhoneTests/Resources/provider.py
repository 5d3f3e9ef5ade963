#!/usr/bin/python3
"""A VOIP app for the Phone app's end-to-end tests: registers as NAME, fulfils every action it
receives and prints one line per action with its arguments ("action play-dtmf UUID Digits=5"),
so that a test reads what the app was asked to do.

usage: provider.py BUS_ADDRESS [--name NAME] [--incoming UUID HANDLE [CALLER_NAME]] [--missed UUID HANDLE]
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
parser.add_argument("--missed", nargs=2)
options = parser.parse_args()

dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
bus = dbus.bus.BusConnection(options.address)
manager = dbus.Interface(bus.get_object(BUS, ROOT), BUS + ".Manager")
path = manager.RegisterProvider({"Name": options.name})
provider = dbus.Interface(bus.get_object(BUS, path), BUS + ".Provider")


def perform(action, kind, call, args):
    shown = " ".join(f"{key}={args[key]}" for key in sorted(args) if key in ("Handle", "Digits", "Muted", "OnHold"))
    print(f"action {kind} {call} {shown}".rstrip(), flush=True)
    provider.FulfillAction(action, {})
    if kind == "answer":
        print(f"answered {call}", flush=True)


bus.add_signal_receiver(perform, "PerformAction", BUS + ".Provider", None, path)
print(f"registered {options.name} {path}", flush=True)
if options.incoming:
    update = {"Handle": options.incoming[1]}
    if len(options.incoming) > 2:
        update["LocalizedCallerName"] = options.incoming[2]
    provider.ReportNewIncomingCall(options.incoming[0], update)
    print(f"ringing {options.incoming[0]}", flush=True)
if options.missed:
    provider.ReportNewIncomingCall(options.missed[0], {"Handle": options.missed[1]})
    provider.ReportCallEnded(options.missed[0], "unanswered", dbus.UInt64(0))
    print(f"missed {options.missed[0]}", flush=True)
GLib.MainLoop().run()
