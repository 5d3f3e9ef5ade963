import CGtk
import GObjectBoundary
import Localization
import MonkeyCallAPI
import MonkeyCallClient
import PhoneModel

// The GTK program: GtkApplication (single instance, D-Bus activatable through
// org.freedesktop.Application) owns the main thread; Swift's main actor runs on it (MainQueue).
// `--version` before GTK starts: no display needed (a package's test runs it without one).
if CommandLine.arguments.dropFirst().first == "--version" {
    print(Release.description(of: "monkeycall-phone"))
    exit(0)
}
Localization.setUp()
GResourceBundle.register()
MainQueue.attachToGLib()

let application = PhoneApplication()
exit(application.run(CommandLine.arguments))
