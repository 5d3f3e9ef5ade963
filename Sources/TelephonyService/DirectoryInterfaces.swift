import CallDirectory
import DBus
import DesktopNotifications
import FoundationEssentials
import MonkeyCallAPI
import TelephonyCore

/// The user's block list on the root object (`CallDirectory`), and the `CallDirectoryUpdate`
/// object a provider opens to change its own directory (see DirectoryUpdateObject.swift). What
/// they change lives in `Screening`; an update open is dropped when its provider goes.
@TelephonyActor
final class DirectoryInterfaces: ServiceObject, SwitchboardObserver {
    let context: ServiceContext
    /// Asks the user about a new app's directory (DirectoryConsent.swift); nil without a notification server.
    let notifier: Notifier?

    init(context: ServiceContext, notifier: Notifier? = nil) {
        self.context = context
        self.notifier = notifier
    }

    func observe(_ event: SwitchboardEvent) {
        if case .providerRemoved(let provider) = event { dropUpdate(provider) }
    }

    /// The user's block list and the providers' directories (`CallDirectory`, root object).
    func interface() -> Interface {
        typealias API = Telephony1.CallDirectory
        return Interface(API.interface) {
            methodReplyingLater(API.blockHandle) { owner, reply, pattern in
                do {
                    try owner.context.changeSettings({ _ = try $0.blockList.add(pattern) }, answer: { error in if let error { reply.fail(error) } else { reply.send() } })
                } catch let error as DirectoryError {
                    throw DBusError.invalidArgs(error.message)
                }
                owner.context.rootChanged([API.blockedHandles])
            }
            methodReplyingLater(API.unblockHandle) { owner, reply, pattern in
                owner.context.changeSettings({ _ = $0.blockList.remove(pattern) }, answer: { error in if let error { reply.fail(error) } else { reply.send() } })
                owner.context.rootChanged([API.blockedHandles])
            }
            method(API.identify) { owner, _, handle in
                guard handle.utf8.count <= 1024 else { throw DBusError.invalidArgs("a handle is at most 1024 bytes") }
                // Named as a call from it would be (favorite, contact, directory): only host callers get here.
                return owner.context.identify(Handle(value: handle))
            }
            method(API.listDirectories) { owner, _ in
                (owner.context.screening.directories?.list() ?? []).map {
                    DirectorySummary(app: $0.name, enabled: $0.enabled, blockingCount: UInt64($0.blockingCount),
                                     identificationCount: UInt64($0.identificationCount))
                }
            }
            methodReplyingLater(API.setDirectoryEnabled) { owner, reply, name, enabled in
                guard let directories = owner.context.screening.directories, directories.list().contains(where: { $0.name == name }) else {
                    throw DBusError.invalidArgs("no call directory from a provider named '\(name.prefix(64))'")
                }
                owner.context.screening.setDirectoryEnabled(enabled, providerName: name) { result in
                    switch result {
                    case .success: reply.send()
                    case .failure(let error): reply.fail(DBusError.failed(error.message))
                    }
                }
            }
            methodReplyingLater(API.removeDirectory) { owner, reply, name in
                owner.context.screening.removeDirectory(of: name) { result in
                    switch result {
                    case .success: reply.send()
                    case .failure(let error): reply.fail(error.dbusError)
                    }
                }
            }
            property(API.blockedHandles) { owner in owner.context.screening.settings.blockList.patterns }
        }
    }
}
