import CGtk
import GObjectBoundary
import Localization

// The bench's baseline for the Phone app (`monkeycall-bench --phone`): the smallest libadwaita
// window, started as the app starts (the same toolkit, language set-up, GLib main loop on the main
// actor, window size and report of the first frame), with nothing in it. What the app costs
// beyond this is what the app itself costs.
Localization.setUp()
MainQueue.attachToGLib()

let application = adw_application_new("org.monkeycall.PhoneBaseline", G_APPLICATION_NON_UNIQUE)
MainActor.assumeIsolated {
    connect(raw(application), "activate") {
        let window = adw_application_window_new(cast(raw(application)))
        gtk_window_set_title(cast(raw(window)), "Baseline")
        gtk_window_set_default_size(cast(raw(window)), 420, 680)
        FirstFrame.report(raw(window))
        gtk_window_present(cast(raw(window)))
    }
}
var arguments = CommandLine.arguments.map { strdup($0) }
exit(g_application_run(cast(raw(application)), Int32(arguments.count), &arguments))
