import DBus
import Foundation
import MonkeyCallAPI

/// What the caller owns and has seen, alive: its providers (by connection), its calls,
/// the actions it was asked to perform, its open directory updates, Favorites and Recents
/// ids, and other apps' objects. Filled from replies and signals, on any thread.
final class Pool: @unchecked Sendable {
    struct Call: Sendable {
        var uuid: String
        var provider: ObjectPath?
        var outgoing: Bool
    }

    struct Action: Sendable {
        var uuid: String
        var kind: String
        var call: String
    }

    private let lock = NSLock()
    /// Own providers, and the index of the connection that registered each.
    private(set) var providers: [ObjectPath: Int] = [:]
    private var calls: [String: Call] = [:]
    private var callOrder: [String] = []
    private var actions: [String: Action] = [:]
    private var actionOrder: [String] = []
    /// Actions fulfilled, failed or timed out: their UUIDs stay interesting.
    private var spentActions: [String] = []
    /// Calls that ended: stale UUIDs of own calls.
    private var endedCalls: [String] = []
    private var updates: [ObjectPath: ObjectPath] = [:]
    private var favorites: [UInt64] = []
    private var recents: [UInt64] = []
    /// Other apps' objects: from the command line, GetManagedObjects and signals.
    private var foreignPaths: Set<ObjectPath> = []
    private var foreignCalls: Set<String> = []
    private var highestProvider: UInt64 = 0
    /// Ids the search providers answered, and names and numbers AddressBook answered: to use again.
    private var resultIDs: [String] = []
    private var queries: [String] = []

    static let maximumCalls = 256
    static let maximumActions = 256

    init(foreignPaths: [ObjectPath], foreignCalls: [String]) {
        self.foreignPaths = Set(foreignPaths)
        self.foreignCalls = Set(foreignCalls.map { $0.lowercased() })
    }

    // MARK: Reading (under the lock, from the generator)

    func snapshot() -> Snapshot {
        lock.withLock {
            Snapshot(providers: providers.sorted { $0.key < $1.key }.map { ($0.key, $0.value) },
                     calls: callOrder.compactMap { calls[$0] }, actions: actionOrder.compactMap { actions[$0] },
                     spentActions: spentActions, endedCalls: endedCalls, updates: updates.sorted { $0.key < $1.key }.map { ($0.key, $0.value) },
                     favorites: favorites, recents: recents, foreignPaths: foreignPaths.sorted(), foreignCalls: foreignCalls.sorted(),
                     highestProvider: highestProvider, resultIDs: resultIDs, queries: queries)
        }
    }

    struct Snapshot {
        var providers: [(path: ObjectPath, connection: Int)]
        var calls: [Call]
        var actions: [Action]
        var spentActions: [String]
        var endedCalls: [String]
        var updates: [(provider: ObjectPath, update: ObjectPath)]
        var favorites: [UInt64]
        var recents: [UInt64]
        var foreignPaths: [ObjectPath]
        var foreignCalls: [String]
        var highestProvider: UInt64
        var resultIDs: [String]
        var queries: [String]
    }

    // MARK: Writing (from replies and signals)

    func addProvider(_ path: ObjectPath, connection: Int) {
        lock.withLock {
            providers[path] = connection
            foreignPaths.remove(path)
            if let number = Telephony1.providerID(from: path) { highestProvider = max(highestProvider, number) }
        }
    }

    func removeProvider(_ path: ObjectPath) {
        lock.withLock {
            providers[path] = nil
            updates[path] = nil
            for (uuid, call) in calls where call.provider == path { forgetCall(uuid) }
        }
    }

    /// Every provider of a connection that closed.
    func removeConnection(_ index: Int) {
        let gone = lock.withLock { providers.filter { $0.value == index }.map(\.key) }
        gone.forEach(removeProvider)
    }

    func addCall(_ uuid: String, provider: ObjectPath?, outgoing: Bool) {
        let uuid = uuid.lowercased()
        lock.withLock {
            if calls[uuid] == nil { callOrder.append(uuid) }
            foreignCalls.remove(uuid)
            foreignPaths.remove(Telephony1.callPath(uuid))
            calls[uuid] = Call(uuid: uuid, provider: provider ?? calls[uuid]?.provider, outgoing: outgoing)
            if callOrder.count > Self.maximumCalls { forgetCall(callOrder[0]) }
        }
    }

    func removeCall(_ uuid: String) { lock.withLock { forgetCall(uuid.lowercased()) } }

    private func forgetCall(_ uuid: String) {
        guard calls.removeValue(forKey: uuid) != nil else { return }
        callOrder.removeAll { $0 == uuid }
        endedCalls.append(uuid)
        if endedCalls.count > 64 { endedCalls.removeFirst(endedCalls.count - 64) }
    }

    /// A call object went away (`InterfacesRemoved`): the call if it is ours.
    func removeCall(path: ObjectPath) {
        lock.withLock {
            if let uuid = calls.keys.first(where: { Telephony1.callPath($0) == path }) { forgetCall(uuid) }
        }
    }

    func addAction(_ action: Action) {
        lock.withLock {
            if actions[action.uuid] == nil { actionOrder.append(action.uuid) }
            actions[action.uuid] = action
            if actionOrder.count > Self.maximumActions { spend(actionOrder[0]) }
        }
    }

    func removeAction(_ uuid: String) { lock.withLock { spend(uuid) } }

    private func spend(_ uuid: String) {
        guard actions.removeValue(forKey: uuid) != nil else { return }
        actionOrder.removeAll { $0 == uuid }
        spentActions.append(uuid)
        if spentActions.count > 64 { spentActions.removeFirst(spentActions.count - 64) }
    }

    func addUpdate(_ update: ObjectPath, provider: ObjectPath) { lock.withLock { updates[provider] = update } }
    func removeUpdate(_ update: ObjectPath) { lock.withLock { updates = updates.filter { $0.value != update } } }

    func addFavorite(_ id: UInt64) { lock.withLock { favorites.append(id); if favorites.count > 64 { favorites.removeFirst() } } }
    func removeFavorite(_ id: UInt64) { lock.withLock { favorites.removeAll { $0 == id } } }
    func setRecents(_ ids: [UInt64]) { lock.withLock { recents = Array(ids.prefix(64)) } }

    /// Result ids from GNOME Shell's or KRunner's answers (the last 64 different ones).
    func addResultIDs(_ ids: [String]) { lock.withLock { Self.remember(ids, in: &resultIDs) } }
    /// Names and numbers from AddressBook's answers (the last 64 different ones).
    func addQueries(_ texts: [String]) { lock.withLock { Self.remember(texts, in: &queries) } }

    private static func remember(_ new: [String], in list: inout [String]) {
        for text in new.prefix(16) where text.utf8.count <= 1_024 && !list.contains(text) { list.append(text) }
        if list.count > 64 { list.removeFirst(list.count - 64) }
    }

    func addForeign(path: ObjectPath) {
        lock.withLock {
            guard providers[path] == nil, !updates.values.contains(path), !calls.keys.contains(where: { Telephony1.callPath($0) == path }) else { return }
            if foreignPaths.count < 256 { foreignPaths.insert(path) }
        }
    }

    func addForeign(call uuid: String) {
        let uuid = uuid.lowercased()
        lock.withLock {
            guard calls[uuid] == nil, foreignCalls.count < 256 else { return }
            foreignCalls.insert(uuid)
        }
    }

    var counts: (providers: Int, calls: Int, actions: Int, updates: Int) {
        lock.withLock { (providers.count, calls.count, actions.count, updates.count) }
    }
}
