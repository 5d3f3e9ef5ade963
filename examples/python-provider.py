#!/usr/bin/python3
"""A MonkeyCall provider in Python: the smallest VOIP app that works.

It shows the whole provider side of the D-Bus API (the contract is
dbus/org.monkeycall.Telephony1.xml in this repository) with nothing but
dbus-python and GLib from Debian (apt install python3-dbus python3-gi):

- starts the service by D-Bus activation when it is installed (scripts/install)
  but not running, and otherwise says how to start it;
- registers with the service (RegisterProvider) and waits for DidBegin; it
  declares the monkeycall: link scheme, so `gio open monkeycall://alice` and
  `monkeycall open monkeycall://alice` call through it (after Call on the
  notification that asks first);
- reports an incoming call when asked to (ReportNewIncomingCall);
- fulfils every action the user asks for (PerformAction -> FulfillAction);
  an outgoing call ("start") then starts connecting and connects, as a real
  network would, after short delays;
- follows its calls' State (the Call objects' PropertiesChanged, which the
  service sends to the provider that owns the call);
- notes audio sessions, timed-out actions and a restart of the service, after
  which it registers again;
- with --one-call, exits 0 once its first call has ended.

usage: python-provider.py [--address BUS_ADDRESS] [--name NAME]
                          [--incoming HANDLE] [--connect-after SECONDS] [--one-call]
"""
import argparse
import uuid

import dbus
import dbus.mainloop.glib
from gi.repository import GLib

SERVICE = "org.monkeycall.Telephony1"
ROOT = "/org/monkeycall/Telephony1"
PROVIDER = SERVICE + ".Provider"


def say(text):
    print(text, flush=True)


class Provider:
    def __init__(self, bus, name, connect_after, on_call_ended=None):
        self.bus = bus
        self.name = name
        self.connect_after = connect_after
        self.on_call_ended = on_call_ended
        self.path = None
        self.object = None
        self.registrations = 0
        # The service's provider signals come only to us; one receiver each.
        for signal, handler in [("DidBegin", self.did_begin), ("PerformAction", self.perform),
                                ("TimedOutPerformingAction", self.timed_out),
                                ("DidActivateAudioSession", self.audio_on),
                                ("DidDeactivateAudioSession", self.audio_off)]:
            bus.add_signal_receiver(handler, signal, PROVIDER, path_keyword="path")
        # Its calls' changes come to it too (an observer of other calls would call Manager.Subscribe).
        bus.add_signal_receiver(self.call_changed, "PropertiesChanged", "org.freedesktop.DBus.Properties",
                                SERVICE, path_keyword="path")
        # When the service restarts, register again.
        bus.watch_name_owner(SERVICE, self.owner_changed)

    def register(self):
        manager = dbus.Interface(self.bus.get_object(SERVICE, ROOT), SERVICE + ".Manager")
        configuration = {
            "Name": self.name,
            "SupportedHandleTypes": dbus.Array(["generic", "phone-number"], signature="s"),
            "MaximumCallGroups": dbus.UInt32(2),
            # Links monkeycall://HANDLE come to this app.
            "URLSchemes": dbus.Array(["monkeycall"], signature="s"),
        }
        self.path = manager.RegisterProvider(configuration)
        self.object = dbus.Interface(self.bus.get_object(SERVICE, self.path), PROVIDER)
        self.registrations += 1
        say(f"registered as {self.name} at {self.path} (registration {self.registrations})")

    def owner_changed(self, owner):
        if not owner:
            if self.path:
                say("the service went away; every call has ended")
            self.path = None
        elif self.path is None:
            self.register()

    # Signals. Each handler checks that the signal is for this registration.

    def did_begin(self, path=None):
        if path == self.path:
            say("began")

    def perform(self, action, kind, call, args, path=None):
        if path != self.path:
            return
        say(f"action {kind} {call}")
        self.object.FulfillAction(action, {})
        if kind == "start":
            GLib.timeout_add(int(self.connect_after * 1000), self.connecting, call)

    def connecting(self, call):
        if self.report(call, "ReportOutgoingCallStartedConnecting"):
            say(f"connecting {call}")
            GLib.timeout_add(int(self.connect_after * 1000), self.connected, call)
        return False

    def connected(self, call):
        if self.report(call, "ReportOutgoingCallConnected"):
            say(f"connected {call}")
        return False

    def report(self, call, method):
        """A progress report on an outgoing call; False when the call ended meanwhile (the user
        hung up, or the service went away)."""
        if self.object is None:
            return False
        try:
            getattr(self.object, method)(call, dbus.UInt64(0))
            return True
        except dbus.DBusException as error:
            say(f"call {call} is over: {error.get_dbus_message()}")
            return False

    def call_changed(self, interface, changed, invalidated, path=None):
        if interface != SERVICE + ".Call" or "State" not in changed:
            return
        digits = path.rsplit("/", 1)[-1]
        call = "-".join([digits[:8], digits[8:12], digits[12:16], digits[16:20], digits[20:]])
        say(f"state {call} {changed['State']}")
        if changed["State"] == "ended" and self.on_call_ended:
            self.on_call_ended()

    def audio_on(self, path=None):
        if path == self.path:
            say("audio on")

    def audio_off(self, path=None):
        if path == self.path:
            say("audio off")

    def timed_out(self, action, kind, call, path=None):
        if path == self.path:
            say(f"timed out {kind} {call}")

    def report_incoming(self, handle):
        call = str(uuid.uuid4())
        try:
            self.object.ReportNewIncomingCall(call, {"Handle": handle, "LocalizedCallerName": handle.title()})
            say(f"ringing {call} from {handle}")
        except dbus.DBusException as error:
            say(f"refused: {error.get_dbus_name()}: {error.get_dbus_message()}")
        return False


def start_service(bus):
    """Starts monkeycalld by D-Bus activation when it is installed and not running; the
    name-owner watch then registers. Without it, say how to start it, and wait."""
    try:
        bus.activate_name_owner(SERVICE)
    except dbus.DBusException as error:
        say(f"the MonkeyCall service is not running ({error.get_dbus_name()}); start it with "
            "scripts/run, or install it (the Debian package, or scripts/install) so that it starts by itself. Waiting for it.")


def main():
    parser = argparse.ArgumentParser(description="A MonkeyCall provider in Python.")
    parser.add_argument("--address", help="bus address (default: the session bus)")
    parser.add_argument("--name", default="PyPhone", help="the name the user sees")
    parser.add_argument("--incoming", metavar="HANDLE", help="report an incoming call from HANDLE")
    parser.add_argument("--connect-after", type=float, default=1.0, metavar="SECONDS",
                        help="delay before an outgoing call connects, and again before connected")
    parser.add_argument("--one-call", action="store_true", help="exit once the first call has ended")
    options = parser.parse_args()

    dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
    bus = dbus.bus.BusConnection(options.address) if options.address else dbus.SessionBus()
    loop = GLib.MainLoop()
    provider = Provider(bus, options.name, options.connect_after, loop.quit if options.one_call else None)
    start_service(bus)
    if options.incoming:
        # Once registered (watch_name_owner calls back from the main loop).
        def incoming():
            if provider.path is None:
                return True
            return provider.report_incoming(options.incoming)
        GLib.timeout_add(50, incoming)
    loop.run()


if __name__ == "__main__":
    main()
