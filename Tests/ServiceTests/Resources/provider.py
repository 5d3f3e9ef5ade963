#!/usr/bin/python3
"""A VOIP app in Python that plays a MonkeyCall provider, for end-to-end tests.

Registers as PyPhone, optionally reports an incoming call, and fulfils every
action it receives, printing one line per event.

usage: provider.py BUS_ADDRESS [--incoming UUID HANDLE [CALLER_NAME]]
"""
import sys

import dbus
import dbus.mainloop.glib
from gi.repository import GLib

NAME = "org.monkeycall.Telephony1"
ROOT = "/org/monkeycall/Telephony1"

dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
bus = dbus.bus.BusConnection(sys.argv[1])
manager = dbus.Interface(bus.get_object(NAME, ROOT), NAME + ".Manager")
path = manager.RegisterProvider({"Name": "PyPhone"})
provider = dbus.Interface(bus.get_object(NAME, path), NAME + ".Provider")


def perform(action, kind, call, args):
    print(f"action {kind} {call}", flush=True)
    provider.FulfillAction(action, {})


bus.add_signal_receiver(perform, "PerformAction", NAME + ".Provider", None, path)
bus.add_signal_receiver(lambda: print("audio on", flush=True), "DidActivateAudioSession", NAME + ".Provider", None, path)
print(f"registered {path}", flush=True)
if len(sys.argv) >= 5 and sys.argv[2] == "--incoming":
    update = {"Handle": sys.argv[4]}
    if len(sys.argv) == 6:
        update["LocalizedCallerName"] = sys.argv[5]
    provider.ReportNewIncomingCall(sys.argv[3], update)
    print(f"ringing {sys.argv[3]}", flush=True)
GLib.MainLoop().run()
