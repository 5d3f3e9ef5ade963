import CallDirectory
import DBus
import Foundation
import MonkeyCallAPI

extension TelephonyService {
    /// The user's block list and the providers' directories (`CallDirectory`, root object).
    func callDirectoryInterface() -> Interface {
        Interface(Telephony1.Interface.callDirectory) {
            Method("BlockHandle", in: ["pattern": "s"]) { [weak self] call in
                guard let self else { throw TelephonyService.stopping }
                let pattern = try call.decode(String.self)
                do {
                    try screening.update { _ = try $0.blockList.add(pattern) }
                } catch let error as DirectoryError {
                    throw DBusError.invalidArgs(error.message)
                }
                rootChanged(["BlockedHandles"], on: Telephony1.Interface.callDirectory)
                return .empty
            }
            Method("UnblockHandle", in: ["pattern": "s"]) { [weak self] call in
                guard let self else { throw TelephonyService.stopping }
                let pattern = try call.decode(String.self)
                screening.update { _ = $0.blockList.remove(pattern) }
                rootChanged(["BlockedHandles"], on: Telephony1.Interface.callDirectory)
                return .empty
            }
            Method("Identify", in: ["handle": "s"], out: ["label": "s", "blocked": "b"]) { [weak self] call in
                guard let self else { throw TelephonyService.stopping }
                let handle = try call.decode(String.self)
                guard handle.utf8.count <= 1024 else { throw DBusError.invalidArgs("a handle is at most 1024 bytes") }
                return .values([.string(screening.label(for: handle) ?? ""), .bool(screening.isBlocked(handle))])
            }
            Method("ListDirectories", out: ["directories": "a(sbtt)"]) { [weak self] _ in
                guard let self else { throw TelephonyService.stopping }
                let list = screening.directories?.list() ?? []
                return .values([.array(element: "(sbtt)", list.map {
                    .structure([.string($0.name), .bool($0.enabled), .uint64(UInt64($0.blockingCount)), .uint64(UInt64($0.identificationCount))])
                })])
            }
            Method("SetDirectoryEnabled", in: ["provider_name": "s", "enabled": "b"]) { [weak self] call in
                guard let self else { throw TelephonyService.stopping }
                let (name, enabled) = try call.decode(String.self, Bool.self)
                guard let directories = screening.directories, directories.list().contains(where: { $0.name == name }) else {
                    throw DBusError.invalidArgs("no call directory from a provider named '\(name.prefix(64))'")
                }
                screening.setDirectoryEnabled(enabled, providerName: name) { result in
                    switch result {
                    case .success: call.reply()
                    case .failure(let error): call.fail(DBusError.failed(error.message))
                    }
                }
                return .later
            }
            Property("BlockedHandles", "as") { [weak self] in
                guard let self else { throw TelephonyService.stopping }
                return screening.settings.blockList.patterns.dbusValue
            }
        }
    }

    /// Do Not Disturb and its exceptions, as Manager properties that persist.
    func screeningProperties() -> [Property] {
        let settings: [(String, WritableKeyPath<ScreeningSettings, Bool>)] = [
            ("DoNotDisturb", \.doNotDisturb), ("DoNotDisturbAllowFavorites", \.doNotDisturbAllowFavorites),
            ("DoNotDisturbAllowRepeatedCalls", \.doNotDisturbAllowRepeatedCalls), ("SilenceUnknownCallers", \.silenceUnknownCallers),
        ]
        return settings.map { name, keyPath in
            Property(name, "b", set: { [weak self] value, _ in
                guard let self else { throw TelephonyService.stopping }
                let enabled = try Bool(dbusValue: value)
                changeDoNotDisturb { screening.update { $0[keyPath: keyPath] = enabled } }
            }, get: { [weak self] in
                guard let self else { throw TelephonyService.stopping }
                return .bool(screening.settings[keyPath: keyPath])
            })
        } + [
            // Which Do Not Disturb is in force: ours, the desktop's, or none.
            Property("DoNotDisturbSource", "s") { [weak self] in
                guard let self else { throw TelephonyService.stopping }
                return .string(screening.doNotDisturbSource.rawValue)
            },
            Property("PausesMediaDuringCalls", "b", set: { [weak self] value, _ in
                guard let self else { throw TelephonyService.stopping }
                let enabled = try Bool(dbusValue: value)
                if enabled && !options.pausesMedia {
                    throw DBusError(name: "org.freedesktop.DBus.Error.NotSupported", message: "monkeycalld runs with --no-pause-media")
                }
                screening.update { $0.pausesMediaDuringCalls = enabled }
            }, get: { [weak self] in
                guard let self else { throw TelephonyService.stopping }
                return .bool(options.pausesMedia && screening.settings.pausesMediaDuringCalls)
            }),
        ]
    }

    func rootChanged(_ names: [String], on interface: String) {
        connection.exportedObject(at: Telephony1.rootPath)?.propertiesChanged(names, on: interface)
    }
}
