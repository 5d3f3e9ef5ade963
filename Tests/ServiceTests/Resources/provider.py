#!/usr/bin/python3
"""A VOIP app in Python that plays a MonkeyCall provider, for end-to-end tests.

Registers as PyPhone, optionally reports an incoming call, and fulfils every
action it receives (except those of a kind given to --keep, which it leaves
pending), printing one line per event. With --connecting, an outgoing call it
starts reports that it started connecting, and stays connecting.

usage: provider.py BUS_ADDRESS [--incoming UUID HANDLE [CALLER_NAME]] [--keep KIND] [--connecting]
"""
import argparse

import dbus
import dbus.mainloop.glib
from gi.repository import GLib

NAME = "org.monkeycall.Telephony1"
ROOT = "/org/monkeycall/Telephony1"

parser = argparse.ArgumentParser()
parser.add_argument("address")
parser.add_argument("--incoming", nargs="+", metavar="UUID HANDLE [CALLER_NAME]")
parser.add_argument("--keep", action="append", default=[], metavar="KIND")
parser.add_argument("--connecting", action="store_true")
options = parser.parse_args()
if options.incoming and len(options.incoming) not in (2, 3):
    parser.error("--incoming takes UUID HANDLE [CALLER_NAME]")

dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
bus = dbus.bus.BusConnection(options.address)
manager = dbus.Interface(bus.get_object(NAME, ROOT), NAME + ".Manager")
path = manager.RegisterProvider({"Name": "PyPhone"})
provider = dbus.Interface(bus.get_object(NAME, path), NAME + ".Provider")


def perform(action, kind, call, args):
    if kind in options.keep:
        print(f"kept {kind} {call}", flush=True)
        return
    print(f"action {kind} {call}", flush=True)
    provider.FulfillAction(action, {})
    if kind == "start" and options.connecting:
        provider.ReportOutgoingCallStartedConnecting(call, dbus.UInt64(0))
        print(f"connecting {call}", flush=True)


bus.add_signal_receiver(perform, "PerformAction", NAME + ".Provider", None, path)
bus.add_signal_receiver(lambda: print("audio on", flush=True), "DidActivateAudioSession", NAME + ".Provider", None, path)
print(f"registered {path}", flush=True)
if options.incoming:
    update = {"Handle": options.incoming[1]}
    if len(options.incoming) == 3:
        update["LocalizedCallerName"] = options.incoming[2]
    provider.ReportNewIncomingCall(options.incoming[0], update)
    print(f"ringing {options.incoming[0]}", flush=True)
GLib.MainLoop().run()
