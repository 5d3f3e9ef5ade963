import CGtk
import GObjectBoundary
import Localization
import MonkeyCallClient
import PhoneModel

// The GTK program: GtkApplication (single instance, D-Bus activatable through
// org.freedesktop.Application) owns the main thread; Swift's main actor runs on it (MainQueue).
Localization.setUp()
MainQueue.attachToGLib()

let application = PhoneApplication()
exit(application.run(CommandLine.arguments))
