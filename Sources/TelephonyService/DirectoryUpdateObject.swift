import CallDirectory
import DBus
import Foundation
import MonkeyCallAPI
import TelephonyCore

/// `Provider.BeginCallDirectoryUpdate` and the `CallDirectoryUpdate` object it
/// opens at `/Provider/<n>/DirectoryUpdate`: the provider's blocking and
/// identification entries, applied atomically at `Complete`.
extension TelephonyService {
    static func updatePath(_ provider: ProviderID) -> ObjectPath {
        Telephony1.providerPath(provider.rawValue).appending("DirectoryUpdate")
    }

    /// Directory errors under the API's names.
    static func dbusError(_ error: DirectoryError) -> DBusError {
        switch error.name {
        case "InvalidArgs": DBusError.invalidArgs(error.message)
        case "Failed": DBusError.failed(error.message)
        default: DBusError(name: Telephony1.errorPrefix + error.name, message: error.message)
        }
    }

    func beginDirectoryUpdate(_ provider: Provider, incremental: Bool) throws -> ObjectPath {
        guard let directories = screening.directories else { throw DBusError.failed("call directories are unavailable on this system") }
        do {
            _ = try directories.beginUpdate(providerName: provider.name, kind: incremental ? .incremental : .complete)
        } catch {
            throw Self.dbusError(error)
        }
        let path = Self.updatePath(provider.id)
        connection.unexport(path)
        do {
            try connection.export(path, [directoryUpdateInterface(provider)])
        } catch {
            directories.cancelUpdate(providerName: provider.name)
            throw error
        }
        return path
    }

    /// The provider went away or invalidated: an open update is dropped, the directory stays as it was.
    func dropDirectoryUpdate(_ provider: Provider) {
        guard let directories = screening.directories, directories.openUpdate(providerName: provider.name) != nil else { return }
        screening.dropUpdate(of: provider.name)
        connection.unexport(Self.updatePath(provider.id))
    }

    private func directoryUpdateInterface(_ provider: Provider) -> Interface {
        let name = provider.name
        /// The open update, for its provider's own connection only.
        func openUpdate(_ service: TelephonyService, _ call: MethodCall) throws -> DirectoryUpdate {
            guard call.sender == provider.owner else {
                throw DBusError.accessDenied("only the connection that registered provider \(provider.id) may change its call directory")
            }
            guard let update = service.screening.directories?.openUpdate(providerName: name) else {
                throw DBusError.unknownObject("the directory update has ended")
            }
            return update
        }
        func step(_ body: @escaping (TelephonyService, MethodCall, DirectoryUpdate) throws(DirectoryError) -> Void) -> (MethodCall) throws -> MethodReply {
            { [weak self] call in
                guard let self else { throw TelephonyService.stopping }
                let update = try openUpdate(self, call)
                do throws(DirectoryError) {
                    try body(self, call, update)
                } catch {
                    throw Self.dbusError(error)
                }
                return .empty
            }
        }
        return Interface(Telephony1.Interface.callDirectoryUpdate) {
            Method("AddBlockingEntries", in: ["numbers": "ax"], handler: step { _, call, update throws(DirectoryError) in
                try update.addBlocking(try Self.numbers(call))
            })
            Method("AddIdentificationEntries", in: ["numbers": "ax", "labels": "as"], handler: step { _, call, update throws(DirectoryError) in
                guard let (numbers, labels) = try? call.decode([Int64].self, [String].self) else {
                    throw DirectoryError.invalidArguments("numbers and labels are needed")
                }
                try update.addIdentification(numbers, labels: labels)
            })
            Method("RemoveBlockingEntries", in: ["numbers": "ax"], handler: step { _, call, update throws(DirectoryError) in
                try update.removeBlocking(try Self.numbers(call))
            })
            Method("RemoveAllBlockingEntries", handler: step { _, _, update throws(DirectoryError) in try update.removeAllBlocking() })
            Method("RemoveIdentificationEntries", in: ["numbers": "ax"], handler: step { _, call, update throws(DirectoryError) in
                try update.removeIdentification(try Self.numbers(call))
            })
            Method("RemoveAllIdentificationEntries", handler: step { _, _, update throws(DirectoryError) in try update.removeAllIdentification() })
            // Applied and saved off the service queue (20,000,000 entries take about a second); answered when done.
            Method("Complete") { [weak self] call in
                guard let self else { throw TelephonyService.stopping }
                _ = try openUpdate(self, call)
                connection.unexport(Self.updatePath(provider.id))
                screening.completeDirectory(of: name) { [weak self] result in
                    switch result {
                    case .success:
                        self?.logger.info("call directory of '\(name)' updated")
                        call.reply()
                    case .failure(let error):
                        call.fail(Self.dbusError(error))
                    }
                }
                return .later
            }
            Method("Cancel", handler: step { service, _, _ throws(DirectoryError) in
                service.screening.dropUpdate(of: name)
                service.connection.unexport(Self.updatePath(provider.id))
            })
        }
    }

    private static func numbers(_ call: MethodCall) throws(DirectoryError) -> [Int64] {
        guard let numbers = try? call.decode([Int64].self) else { throw DirectoryError.invalidArguments("numbers are needed") }
        return numbers
    }
}
