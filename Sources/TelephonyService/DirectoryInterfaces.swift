import CallDirectory
import DBus
import Foundation
import MonkeyCallAPI

extension TelephonyService {
    /// The user's block list and the providers' directories (`CallDirectory`, root object).
    func callDirectoryInterface() -> Interface {
        typealias API = Telephony1.CallDirectory
        return Interface(API.interface) {
            methodReplyingLater(API.blockHandle) { service, reply, pattern in
                do {
                    try service.changeSettings({ _ = try $0.blockList.add(pattern) }, answer: { error in if let error { reply.fail(error) } else { reply.send() } })
                } catch let error as DirectoryError {
                    throw DBusError.invalidArgs(error.message)
                }
                service.rootChanged([API.blockedHandles])
            }
            methodReplyingLater(API.unblockHandle) { service, reply, pattern in
                service.changeSettings({ _ = $0.blockList.remove(pattern) }, answer: { error in if let error { reply.fail(error) } else { reply.send() } })
                service.rootChanged([API.blockedHandles])
            }
            method(API.identify) { service, _, handle in
                guard handle.utf8.count <= 1024 else { throw DBusError.invalidArgs("a handle is at most 1024 bytes") }
                return (service.screening.label(for: handle) ?? "", service.screening.isBlocked(handle))
            }
            method(API.listDirectories) { service, _ in
                (service.screening.directories?.list() ?? []).map {
                    DirectorySummary(app: $0.name, enabled: $0.enabled, blockingCount: UInt64($0.blockingCount),
                                     identificationCount: UInt64($0.identificationCount))
                }
            }
            methodReplyingLater(API.setDirectoryEnabled) { service, reply, name, enabled in
                guard let directories = service.screening.directories, directories.list().contains(where: { $0.name == name }) else {
                    throw DBusError.invalidArgs("no call directory from a provider named '\(name.prefix(64))'")
                }
                service.screening.setDirectoryEnabled(enabled, providerName: name) { result in
                    switch result {
                    case .success: reply.send()
                    case .failure(let error): reply.fail(DBusError.failed(error.message))
                    }
                }
            }
            property(API.blockedHandles) { service in service.screening.settings.blockList.patterns }
        }
    }

    /// Do Not Disturb and its exceptions, as Manager properties that persist.
    func screeningProperties() -> [Property] {
        typealias Manager = Telephony1.Manager
        let settings: [(PropertySpec<Bool>, WritableKeyPath<ScreeningSettings, Bool>)] = [
            (Manager.doNotDisturb, \.doNotDisturb), (Manager.doNotDisturbAllowFavorites, \.doNotDisturbAllowFavorites),
            (Manager.doNotDisturbAllowRepeatedCalls, \.doNotDisturbAllowRepeatedCalls), (Manager.silenceUnknownCallers, \.silenceUnknownCallers),
        ]
        return settings.map { spec, keyPath in
            property(spec, get: { service in service.screening.settings[keyPath: keyPath] }, set: { service, enabled, call in
                service.changeSettings({ $0[keyPath: keyPath] = enabled }, answer: call.answerLater())
            })
        } + [
            // Which Do Not Disturb is in force: ours, the desktop's, or none.
            property(Manager.doNotDisturbSource) { service in service.screening.doNotDisturbSource.rawValue },
            property(Manager.pausesMediaDuringCalls, get: { service in
                service.options.pausesMedia && service.screening.settings.pausesMediaDuringCalls
            }, set: { service, enabled, call in
                if enabled && !service.options.pausesMedia {
                    throw DBusError(name: DBusError.Name.notSupported, message: "monkeycalld runs with --no-pause-media")
                }
                service.changeSettings({ $0.pausesMediaDuringCalls = enabled }, answer: call.answerLater())
            }),
        ]
    }

    /// Changes the user's settings at once and answers once they are saved: with nil, or with
    /// `SettingsUnavailable` when they could not be (the change undone, and announced so).
    func changeSettings(_ change: (inout ScreeningSettings) throws -> Void, answer: @escaping @Sendable (DBusError?) -> Void) rethrows {
        try changeDoNotDisturb {
            try screening.update(change) { [weak self] failure in
                guard let self, let failure else { return answer(nil) }
                if failure.undone {
                    typealias Manager = Telephony1.Manager
                    changeDoNotDisturb {}
                    rootChanged([Manager.doNotDisturb, Manager.doNotDisturbAllowFavorites, Manager.doNotDisturbAllowRepeatedCalls,
                                 Manager.silenceUnknownCallers, Manager.pausesMediaDuringCalls, Manager.doNotDisturbSource,
                                 Telephony1.CallDirectory.blockedHandles])
                }
                answer(APIError.settingsUnavailable(failure.message))
            }
        }
    }
}

extension MethodCall {
    /// For a property setter: `Properties.Set` answers when this is called (nil: done).
    func answerLater() -> @Sendable (DBusError?) -> Void {
        replyLater()
        return { error in if let error { self.fail(error) } else { self.reply() } }
    }
}
