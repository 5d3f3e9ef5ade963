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
        Telephony1.directoryUpdatePath(Telephony1.providerPath(provider.rawValue))
    }

    func beginDirectoryUpdate(_ provider: Provider, incremental: Bool) throws -> ObjectPath {
        guard let directories = screening.directories else { throw DBusError.failed("call directories are unavailable on this system") }
        do {
            _ = try directories.beginUpdate(providerName: provider.appKey, kind: incremental ? .incremental : .complete)
        } catch {
            throw error.dbusError
        }
        let path = Self.updatePath(provider.id)
        connection.unexport(path)
        do {
            try connection.export(path, [directoryUpdateInterface(provider)])
        } catch {
            directories.cancelUpdate(providerName: provider.appKey)
            throw error
        }
        return path
    }

    /// The provider went away or invalidated: an open update is dropped, the directory stays as it was.
    func dropDirectoryUpdate(_ provider: Provider) {
        guard let directories = screening.directories, directories.openUpdate(providerName: provider.appKey) != nil else { return }
        screening.dropUpdate(of: provider.appKey)
        connection.unexport(Self.updatePath(provider.id))
    }

    private func directoryUpdateInterface(_ provider: Provider) -> Interface {
        typealias API = Telephony1.CallDirectoryUpdate
        // Keyed by the app, not by the Name it chose: an impostor of another app's Name has its own directory.
        let name = provider.appKey
        /// Runs `body` on the open update, for its provider's own connection only.
        func step(_ service: TelephonyService, _ call: MethodCall, _ body: (DirectoryUpdate) throws(DirectoryError) -> Void) throws {
            guard call.sender == provider.owner else {
                throw DBusError.accessDenied("only the connection that registered provider \(provider.id) may change its call directory")
            }
            guard let update = service.screening.directories?.openUpdate(providerName: name) else {
                throw DBusError.unknownObject("the directory update has ended")
            }
            do throws(DirectoryError) {
                try body(update)
            } catch {
                throw error.dbusError
            }
        }
        return Interface(API.interface) {
            method(API.addBlockingEntries) { service, call, numbers in try step(service, call) { update throws(DirectoryError) in try update.addBlocking(numbers) } }
            method(API.addIdentificationEntries) { service, call, numbers, labels in
                try step(service, call) { update throws(DirectoryError) in try update.addIdentification(numbers, labels: labels) }
            }
            method(API.removeBlockingEntries) { service, call, numbers in
                try step(service, call) { update throws(DirectoryError) in try update.removeBlocking(numbers) }
            }
            method(API.removeAllBlockingEntries) { service, call in
                try step(service, call) { update throws(DirectoryError) in try update.removeAllBlocking() }
            }
            method(API.removeIdentificationEntries) { service, call, numbers in
                try step(service, call) { update throws(DirectoryError) in try update.removeIdentification(numbers) }
            }
            method(API.removeAllIdentificationEntries) { service, call in
                try step(service, call) { update throws(DirectoryError) in try update.removeAllIdentification() }
            }
            // Applied and saved off the service queue (20,000,000 entries take about a second); answered when done.
            methodReplyingLater(API.complete) { service, reply in
                try step(service, reply.call) { _ throws(DirectoryError) in }
                service.connection.unexport(Self.updatePath(provider.id))
                service.screening.completeDirectory(of: name) { [weak service] result in
                    switch result {
                    case .success:
                        service?.logger.info("call directory of '\(name)' updated")
                        reply.send()
                        service?.askToEnableDirectory(of: provider)
                    case .failure(let error):
                        reply.fail(error.dbusError)
                    }
                }
            }
            method(API.cancel) { service, call in
                try step(service, call) { _ throws(DirectoryError) in
                    service.screening.dropUpdate(of: name)
                    service.connection.unexport(Self.updatePath(provider.id))
                }
            }
        }
    }
}
