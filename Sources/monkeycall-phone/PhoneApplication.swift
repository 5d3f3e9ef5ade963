import CGtk
import FoundationEssentials
import GObjectBoundary
import MonkeyCallAPI
import Localization
import MonkeyCallClient
import PhoneModel
import ScreenText

/// The application: its actions (`app.call`, `app.show-call`, `app.search`), the main window,
/// and the call window when a call is shown.
@MainActor
final class PhoneApplication {
    static let id = "org.monkeycall.Phone"
    let app: UnsafeMutablePointer<AdwApplication>
    private(set) var model: PhoneModel?
    private var mainWindow: MainWindow?
    private var callWindow: CallWindow?
    /// Whether the model has been started (on the first activation, not for `--help`).
    private var started = false

    init() {
        app = adw_application_new(Self.id, G_APPLICATION_DEFAULT_FLAGS)
        let object = raw(app)
        connect(object, "startup") { [unowned self] in self.startup() }
        connect(object, "activate") { [unowned self] in self.showMain() }
        addAction("call") { [unowned self] handle in self.call(handle) }
        addAction("show-call") { [unowned self] uuid in self.showCall(uuid) }
        addAction("search") { [unowned self] query in self.search(query) }
        var search: [UnsafePointer<CChar>?] = [UnsafePointer(strdup("<Control>f")), nil]
        gtk_application_set_accels_for_action(cast(object), "app.search('')", &search)
        free(UnsafeMutableRawPointer(mutating: search[0]))
    }

    func run(_ arguments: [String]) -> Int32 {
        var pointers = arguments.map { strdup($0) }
        defer { pointers.forEach { free($0) } }
        return g_application_run(cast(raw(app)), Int32(pointers.count), &pointers)
    }

    private func addAction(_ name: String, _ handler: @escaping @MainActor (String) -> Void) {
        let action = g_simple_action_new(name, mc_variant_type_string())
        connect(raw(action), "activate") { (parameter: GPointer?) in
            guard let text = mc_variant_string(cast(parameter)) else { return }
            handler(String(cString: text))
        }
        g_action_map_add_action(cast(raw(app)), cast(raw(action)))
        g_object_unref(raw(action))
    }

    /// Made once per process, when GApplication registers (primary instance only).
    private func startup() {
        let backend: ClientBackend
        do {
            backend = ClientBackend(client: try TelephonyClient())
        } catch {
            StandardStream.error.write("monkeycall-phone: \(error)\n")
            return
        }
        let model = PhoneModel(backend: backend)
        self.model = model
        model.calls.onShow = { [unowned self] in self.presentCallWindow() }
        mainWindow = MainWindow(application: self, model: model)
    }

    private func startModel() {
        guard !started, let model else { return }
        started = true
        AppTask.start { await model.start() }
    }

    func showMain() {
        startModel()
        mainWindow?.present()
    }

    private func call(_ handle: String) {
        showMain()
        mainWindow?.dial(handle)
    }

    private func showCall(_ uuid: String) {
        startModel()
        model?.calls.show(uuid)
    }

    private func search(_ query: String) {
        showMain()
        // No search is longer (the address book's bound); GTK would lay a longer text out for seconds.
        mainWindow?.search(ScreenText.prefix(query, maximumBytes: Telephony1.AddressBook.maximumQueryBytes))
    }

    func presentCallWindow() {
        guard let model else { return }
        if callWindow == nil {
            callWindow = CallWindow(application: self, model: model.calls) { [unowned self] in self.callWindow = nil }
        }
        callWindow?.present()
    }
}
