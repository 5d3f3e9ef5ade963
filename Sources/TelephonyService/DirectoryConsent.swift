import DesktopNotifications
import FoundationEssentials
import Localization
import TelephonyCore

/// A call directory labels and blocks callers only once the user has agreed, as on iOS: the first
/// time an app completes one, it is saved as off and the user is asked through a notification
/// ("PyPhone wants to identify and block callers": Enable / Not now); `SetDirectoryEnabled`
/// (`monkeycall directory enable APP`) does the same at any time.
extension DirectoryInterfaces {
    static let directoryConsentPrefix = "directory-"

    /// After an app's first Complete, which saved its directory off with it (`beginCompletion`):
    /// the user is asked, once.
    func askToEnableDirectory(of provider: Provider) {
        let key = provider.appKey
        context.logger.info("call directory of \(key) is off until the user enables it")
        guard let notifier else { return }
        // Named as the user knows the app (a sandboxed app's chosen Name is only a claim).
        let app = AppNames.label(of: provider)
        var notification = DesktopNotification(key: Self.directoryConsentPrefix + key, appName: app,
                                               summary: tr("%1$s wants to identify and block callers", app),
                                               body: NotificationText.sentences(
                                                   tr("Its call directory names callers and blocks numbers on your calls."),
                                                   AppNames.chosenNameNote(of: provider, label: app),
                                                   // TRANSLATORS: "monkeycall directory" is a command: keep it.
                                                   tr("You can change this later with monkeycall directory.")))
        notification.actions = [.init("enable-directory", trc("button", "Enable")), .init("not-now", trc("button", "Not now"))]
        notification.desktopEntry = provider.configuration.desktopEntry
        notifier.post(notification) { [weak self] event in
            guard event == .action("enable-directory"), let self else { return }
            TelephonyActor.enter { self.enableDirectory(key) }
        }
    }

    /// The user pressed Enable.
    private func enableDirectory(_ key: String) {
        let logger = context.logger
        context.screening.setDirectoryEnabled(true, providerName: key) { result in
            switch result {
            case .success: logger.info("call directory of \(key) enabled by the user")
            case .failure(let error): logger.error("cannot enable the call directory of \(key): \(error.message)")
            }
        }
    }
}
