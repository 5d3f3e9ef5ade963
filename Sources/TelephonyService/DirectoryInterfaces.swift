import CallDirectory
import DBus
import Foundation
import MonkeyCallAPI

extension TelephonyService {
    /// The user's block list and the providers' directories (`CallDirectory`, root object).
    func callDirectoryInterface() -> Interface {
        typealias API = Telephony1.CallDirectory
        return Interface(API.interface) {
            method(API.blockHandle) { service, _, pattern in
                do {
                    try service.screening.update { _ = try $0.blockList.add(pattern) }
                } catch let error as DirectoryError {
                    throw DBusError.invalidArgs(error.message)
                }
                service.rootChanged([API.blockedHandles])
            }
            method(API.unblockHandle) { service, _, pattern in
                service.screening.update { _ = $0.blockList.remove(pattern) }
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
            methodReplyingLater(API.removeDirectory) { service, reply, name in
                service.screening.removeDirectory(of: name) { result in
                    switch result {
                    case .success: reply.send()
                    case .failure(let error): reply.fail(error.dbusError)
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
            property(spec, get: { service in service.screening.settings[keyPath: keyPath] }, set: { service, enabled, _ in
                service.changeDoNotDisturb { service.screening.update { $0[keyPath: keyPath] = enabled } }
            })
        } + [
            // Which Do Not Disturb is in force: ours, the desktop's, or none.
            property(Manager.doNotDisturbSource) { service in service.screening.doNotDisturbSource.rawValue },
            property(Manager.pausesMediaDuringCalls, get: { service in
                service.options.pausesMedia && service.screening.settings.pausesMediaDuringCalls
            }, set: { service, enabled, _ in
                if enabled && !service.options.pausesMedia {
                    throw DBusError(name: DBusError.Name.notSupported, message: "monkeycalld runs with --no-pause-media")
                }
                service.screening.update { $0.pausesMediaDuringCalls = enabled }
            }),
        ]
    }
}
