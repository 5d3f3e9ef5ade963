import CallDirectory
import DBus
import FoundationEssentials
import MonkeyCallAPI
import TelephonyCore

/// `Provider.BeginCallDirectoryUpdate` and the `CallDirectoryUpdate` object it
/// opens at `/Provider/<n>/DirectoryUpdate`: the provider's blocking and
/// identification entries, applied atomically at `Complete`.
///
/// What runs here, on the service queue, is bounded by one batch (262,144 entries) and does no
/// copy of its labels: each call is checked and answered at once; the labels are copied out of
/// it and staged in a file on the store's lane (`DirectoryLane`), which every app's batches and
/// completions share, one at a time in the order they came, giving way as they go. The queue
/// never waits for the lane, nor for the disk.
extension DirectoryInterfaces {
    static func updatePath(_ provider: ProviderID) -> ObjectPath {
        Telephony1.directoryUpdatePath(Telephony1.providerPath(provider.rawValue))
    }

    func beginUpdate(_ provider: Provider, incremental: Bool) throws -> ObjectPath {
        guard let directories = context.screening.directories else { throw DBusError.failed("call directories are unavailable on this system") }
        do {
            // Paid for by the app (a host process, whatever Names it uses): its open updates hold 128 MiB together.
            _ = try directories.beginUpdate(providerName: provider.appKey, kind: incremental ? .incremental : .complete,
                                            account: provider.process.isEmpty ? provider.appKey : provider.process)
        } catch {
            throw error.dbusError
        }
        let path = Self.updatePath(provider.id)
        context.objects.unexport(path)
        do {
            try context.objects.export(path, [directoryUpdateInterface(provider)])
        } catch {
            directories.cancelUpdate(providerName: provider.appKey)
            throw error
        }
        return path
    }

    /// The provider went away or invalidated: an open update is dropped, the directory stays as it was.
    func dropUpdate(_ provider: Provider) {
        guard let directories = context.screening.directories, directories.openUpdate(providerName: provider.appKey) != nil else { return }
        context.screening.dropUpdate(of: provider.appKey)
        context.objects.unexport(Self.updatePath(provider.id))
    }

    private func directoryUpdateInterface(_ provider: Provider) -> Interface {
        typealias API = Telephony1.CallDirectoryUpdate
        // Keyed by the app, not by the Name it chose: an impostor of another app's Name has its own directory.
        let name = provider.appKey
        /// Runs `body` on the open update (the access policy lets only its provider's connection call).
        func step(_ owner: DirectoryInterfaces, _ call: MethodCall, _ body: (DirectoryUpdate) throws(DirectoryError) -> Void) throws {
            guard let update = owner.context.screening.directories?.openUpdate(providerName: name) else {
                throw DBusError.unknownObject("the directory update has ended")
            }
            do throws(DirectoryError) {
                try body(update)
            } catch {
                throw error.dbusError
            }
        }
        return Interface(API.interface) {
            method(API.addBlockingEntries) { owner, call, numbers in try step(owner, call) { update throws(DirectoryError) in try update.addBlocking(numbers) } }
            method(API.addIdentificationEntries) { owner, call, numbers, labels in
                try step(owner, call) { update throws(DirectoryError) in try update.addIdentification(numbers, labels: labels) }
            }
            method(API.removeBlockingEntries) { owner, call, numbers in
                try step(owner, call) { update throws(DirectoryError) in try update.removeBlocking(numbers) }
            }
            method(API.removeAllBlockingEntries) { owner, call in
                try step(owner, call) { update throws(DirectoryError) in try update.removeAllBlocking() }
            }
            method(API.removeIdentificationEntries) { owner, call, numbers in
                try step(owner, call) { update throws(DirectoryError) in try update.removeIdentification(numbers) }
            }
            method(API.removeAllIdentificationEntries) { owner, call in
                try step(owner, call) { update throws(DirectoryError) in try update.removeAllIdentification() }
            }
            // Applied and saved off the service queue, on the store's lane after every batch taken before and one
            // update at a time whichever app's (20,000,000 entries take about a second); answered when done.
            methodReplyingLater(API.complete) { owner, reply in
                try step(owner, reply.call) { _ throws(DirectoryError) in }
                owner.context.objects.unexport(Self.updatePath(provider.id))
                owner.context.screening.completeDirectory(of: name) { [weak owner] result in
                    switch result {
                    case .success(let asksUser):
                        owner?.context.logger.info("call directory of '\(name)' updated")
                        reply.send()
                        if asksUser { owner?.askToEnableDirectory(of: provider) }
                    case .failure(let error):
                        reply.fail(error.dbusError)
                    }
                }
            }
            method(API.cancel) { owner, call in
                try step(owner, call) { _ throws(DirectoryError) in
                    owner.context.screening.dropUpdate(of: name)
                    owner.context.objects.unexport(Self.updatePath(provider.id))
                }
            }
        }
    }
}
