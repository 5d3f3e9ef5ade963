import DBus
import Foundation
import MonkeyCallAPI
import Synchronization

/// What the caller owns and has seen, alive: its providers (by connection), its calls,
/// the actions it was asked to perform, its open directory updates, Favorites and Recents
/// ids, and other apps' objects. Filled from replies and signals, on any thread: all its
/// state is behind one `Mutex`.
final class Pool: Sendable {
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

    fileprivate struct State {
        /// Own providers, and the index of the connection that registered each.
        var providers: [ObjectPath: Int] = [:]
        var calls: [String: Call] = [:]
        var callOrder: [String] = []
        var actions: [String: Action] = [:]
        var actionOrder: [String] = []
        /// Actions fulfilled, failed or timed out: their UUIDs stay interesting.
        var spentActions: [String] = []
        /// Calls that ended: stale UUIDs of own calls.
        var endedCalls: [String] = []
        var updates: [ObjectPath: ObjectPath] = [:]
        var favorites: [UInt64] = []
        var recents: [UInt64] = []
        /// Other apps' objects: from the command line, GetManagedObjects and signals.
        var foreignPaths: Set<ObjectPath> = []
        var foreignCalls: Set<String> = []
        var highestProvider: UInt64 = 0
        /// Ids the search providers answered, and names and numbers AddressBook answered: to use again.
        var resultIDs: [String] = []
        var queries: [String] = []
    }

    private let state: Mutex<State>

    static let maximumCalls = 256
    static let maximumActions = 256

    init(foreignPaths: [ObjectPath], foreignCalls: [String]) {
        state = Mutex(State(foreignPaths: Set(foreignPaths), foreignCalls: Set(foreignCalls.map { $0.lowercased() })))
    }

    // MARK: Reading (under the lock, from the generator)

    func snapshot() -> Snapshot {
        state.withLock { s in
            Snapshot(providers: s.providers.sorted { $0.key < $1.key }.map { ($0.key, $0.value) },
                     calls: s.callOrder.compactMap { s.calls[$0] }, actions: s.actionOrder.compactMap { s.actions[$0] },
                     spentActions: s.spentActions, endedCalls: s.endedCalls, updates: s.updates.sorted { $0.key < $1.key }.map { ($0.key, $0.value) },
                     favorites: s.favorites, recents: s.recents, foreignPaths: s.foreignPaths.sorted(), foreignCalls: s.foreignCalls.sorted(),
                     highestProvider: s.highestProvider, resultIDs: s.resultIDs, queries: s.queries)
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
        state.withLock { s in
            s.providers[path] = connection
            s.foreignPaths.remove(path)
            if let number = Telephony1.providerID(from: path) { s.highestProvider = max(s.highestProvider, number) }
        }
    }

    func removeProvider(_ path: ObjectPath) {
        state.withLock { s in
            s.providers[path] = nil
            s.updates[path] = nil
            for (uuid, call) in s.calls where call.provider == path { s.forgetCall(uuid) }
        }
    }

    /// Every provider of a connection that closed.
    func removeConnection(_ index: Int) {
        let gone = state.withLock { s in s.providers.filter { $0.value == index }.map(\.key) }
        gone.forEach(removeProvider)
    }

    func addCall(_ uuid: String, provider: ObjectPath?, outgoing: Bool) {
        let uuid = uuid.lowercased()
        state.withLock { s in
            if s.calls[uuid] == nil { s.callOrder.append(uuid) }
            s.foreignCalls.remove(uuid)
            s.foreignPaths.remove(Telephony1.callPath(uuid))
            s.calls[uuid] = Call(uuid: uuid, provider: provider ?? s.calls[uuid]?.provider, outgoing: outgoing)
            if s.callOrder.count > Self.maximumCalls { s.forgetCall(s.callOrder[0]) }
        }
    }

    func removeCall(_ uuid: String) { state.withLock { s in s.forgetCall(uuid.lowercased()) } }

    /// A call object went away (`InterfacesRemoved`): the call if it is ours.
    func removeCall(path: ObjectPath) {
        state.withLock { s in
            if let uuid = s.calls.keys.first(where: { Telephony1.callPath($0) == path }) { s.forgetCall(uuid) }
        }
    }

    func addAction(_ action: Action) {
        state.withLock { s in
            if s.actions[action.uuid] == nil { s.actionOrder.append(action.uuid) }
            s.actions[action.uuid] = action
            if s.actionOrder.count > Self.maximumActions { s.spend(s.actionOrder[0]) }
        }
    }

    func removeAction(_ uuid: String) { state.withLock { s in s.spend(uuid) } }

    func addUpdate(_ update: ObjectPath, provider: ObjectPath) { state.withLock { s in s.updates[provider] = update } }
    func removeUpdate(_ update: ObjectPath) { state.withLock { s in s.updates = s.updates.filter { $0.value != update } } }

    func addFavorite(_ id: UInt64) { state.withLock { s in s.favorites.append(id); if s.favorites.count > 64 { s.favorites.removeFirst() } } }
    func removeFavorite(_ id: UInt64) { state.withLock { s in s.favorites.removeAll { $0 == id } } }
    func setRecents(_ ids: [UInt64]) { state.withLock { s in s.recents = Array(ids.prefix(64)) } }

    /// Result ids from GNOME Shell's or KRunner's answers (the last 64 different ones).
    func addResultIDs(_ ids: [String]) { state.withLock { s in Self.remember(ids, in: &s.resultIDs) } }
    /// Names and numbers from AddressBook's answers (the last 64 different ones).
    func addQueries(_ texts: [String]) { state.withLock { s in Self.remember(texts, in: &s.queries) } }

    private static func remember(_ new: [String], in list: inout [String]) {
        for text in new.prefix(16) where text.utf8.count <= 1_024 && !list.contains(text) { list.append(text) }
        if list.count > 64 { list.removeFirst(list.count - 64) }
    }

    func addForeign(path: ObjectPath) {
        state.withLock { s in
            guard s.providers[path] == nil, !s.updates.values.contains(path), !s.calls.keys.contains(where: { Telephony1.callPath($0) == path }) else { return }
            if s.foreignPaths.count < 256 { s.foreignPaths.insert(path) }
        }
    }

    func addForeign(call uuid: String) {
        let uuid = uuid.lowercased()
        state.withLock { s in
            guard s.calls[uuid] == nil, s.foreignCalls.count < 256 else { return }
            s.foreignCalls.insert(uuid)
        }
    }

    var counts: (providers: Int, calls: Int, actions: Int, updates: Int) {
        state.withLock { s in (s.providers.count, s.calls.count, s.actions.count, s.updates.count) }
    }
}

extension Pool.State {
    fileprivate mutating func forgetCall(_ uuid: String) {
        guard calls.removeValue(forKey: uuid) != nil else { return }
        callOrder.removeAll { $0 == uuid }
        endedCalls.append(uuid)
        if endedCalls.count > 64 { endedCalls.removeFirst(endedCalls.count - 64) }
    }

    fileprivate mutating func spend(_ uuid: String) {
        guard actions.removeValue(forKey: uuid) != nil else { return }
        actionOrder.removeAll { $0 == uuid }
        spentActions.append(uuid)
        if spentActions.count > 64 { spentActions.removeFirst(spentActions.count - 64) }
    }
}
