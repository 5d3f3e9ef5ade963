import CallHistory
import DBus
import Foundation
import MonkeyCallAPI
import TelephonyCore

/// Recents and Favorites on D-Bus: calls are recorded as they end; favorites
/// name callers. Without a database the service still handles calls, and these
/// interfaces say why they cannot answer.
extension TelephonyService {
    static func unavailable(_ reason: String) -> DBusError {
        APIError.recentsUnavailable("Recents and Favorites are unavailable: \(reason)")
    }

    /// Runs `body` on the database; a database that fails (a read-only or
    /// full disk) gets the same clear error as one that could not be opened.
    func withHistory<T>(_ body: (CallHistory) throws -> T) throws -> T {
        guard let history else { throw Self.unavailable(historyProblem ?? "no database") }
        do {
            return try body(history)
        } catch let error as DBusError {
            throw error
        } catch {
            throw Self.unavailable("\(history.path): \(error)")
        }
    }

    /// What Recents calls the way a call ended.
    static func status(of call: Call) -> RecentCall.Status {
        if call.outgoing {
            if call.hasConnected { return .answered }
            return call.endReason == .failed ? .failed : .cancelled
        }
        if call.wasAnswered || call.hasConnected { return .answered }
        switch call.endReason {
        case .unanswered?, .remoteEnded?: return .missed
        case .failed?: return .failed
        case .answeredElsewhere?: return .answered
        case .declinedElsewhere?, nil: return .declined
        }
    }

    /// Records a call that ended, unless its provider keeps its calls out of Recents.
    func recordEnded(_ call: Call) {
        guard let history else { return }
        if let provider = switchboard.provider(call.provider), !provider.configuration.includesCallsInRecents { return }
        let entry = RecentCall(callUUID: call.uuid.apiString, providerName: call.providerName, handle: call.handle.value,
                               handleType: call.handle.type.rawValue, callerName: callerName(of: call), outgoing: call.outgoing,
                               status: Self.status(of: call), endReason: call.endReason?.rawValue ?? "", startedAt: call.startedAt,
                               connectedAt: call.connectedAt, endedAt: call.endedAt, hasVideo: call.hasVideo)
        store(entry, in: history)
    }

    /// Records an entry and announces it (EntryAdded, and MissedCount for a missed call).
    private func store(_ entry: RecentCall, in history: CallHistory) {
        let recorded: RecentCall
        do {
            recorded = try history.record(entry)
        } catch {
            // Once per spell of failures (a read-only or full disk), not once per call.
            if !recordingFails { logger.error("Recents cannot record calls (calls still work); first lost: \(entry.callUUID): \(error)") }
            recordingFails = true
            return
        }
        if recordingFails { logger.notice("Recents records calls again") }
        recordingFails = false
        do {
            try connection.exportedObject(at: Telephony1.rootPath)?.emit(Telephony1.Recents.entryAdded, Self.encode(recorded))
        } catch {
            logger.error("cannot announce Recents entry \(entry.callUUID): \(error)")
        }
        if recorded.status == .missed { rootChanged([Telephony1.Recents.missedCount]) }
    }

    /// The name to show: the provider's, else a favorite's, else the call directories' label.
    func callerName(of call: Call) -> String {
        if !call.callerName.isEmpty { return call.callerName }
        return favoriteNames[call.handle.value] ?? screening.label(for: call.handle.value) ?? ""
    }

    /// A call refused before it rang (blocked, held back by Do Not Disturb, silenced) still goes in Recents.
    func recordRefused(_ uuid: UUID, provider: Provider, handle: Handle, callerName: String, status: RecentCall.Status) {
        guard let history, provider.configuration.includesCallsInRecents else { return }
        let now = switchboard.clock.now
        let entry = RecentCall(callUUID: uuid.apiString, providerName: provider.name, handle: handle.value, handleType: handle.type.rawValue,
                               callerName: callerName, outgoing: false, status: status, endReason: "", startedAt: now, connectedAt: 0,
                               endedAt: now, hasVideo: false)
        store(entry, in: history)
    }

    func loadFavoriteNames() {
        guard let favorites = try? history?.favorites() else { return }
        favoriteNames = [:]
        for favorite in favorites where favoriteNames[favorite.handle] == nil { favoriteNames[favorite.handle] = favorite.name }
    }

    static func encode(_ entry: RecentCall) -> [String: DBusValue] {
        [
            Telephony1.Key.id: .uint64(UInt64(entry.id ?? 0)), Telephony1.Key.callUUID: .string(entry.callUUID), Telephony1.Key.providerName: .string(entry.providerName),
            Telephony1.Key.handle: .string(entry.handle), Telephony1.Key.handleType: .string(entry.handleType), Telephony1.Key.callerName: .string(entry.callerName),
            Telephony1.Key.outgoing: .bool(entry.outgoing), Telephony1.Key.status: .string(entry.status.rawValue), Telephony1.Key.endReason: .string(entry.endReason),
            Telephony1.Key.startedAt: .uint64(entry.startedAt), Telephony1.Key.connectedAt: .uint64(entry.connectedAt), Telephony1.Key.endedAt: .uint64(entry.endedAt),
            Telephony1.Key.hasVideo: .bool(entry.hasVideo), Telephony1.Key.seen: .bool(entry.seen),
        ]
    }

    static func encode(_ favorite: Favorite) -> [String: DBusValue] {
        [Telephony1.Key.id: .uint64(UInt64(favorite.id ?? 0)), Telephony1.Key.handle: .string(favorite.handle), Telephony1.Key.handleType: .string(favorite.handleType),
                  Telephony1.Key.name: .string(favorite.name), Telephony1.Key.providerName: .string(favorite.providerName)]
    }

    /// A call to `handle` through the registered provider called `providerName`.
    func startCall(to handle: Handle, through providerName: String, from requester: String) throws -> String {
        guard let provider = switchboard.orderedProviders.last(where: { $0.name == providerName }) else {
            throw APIError.noProvider("\(providerName) is not running, so it cannot place the call")
        }
        let uuid = UUID()
        _ = try request([.start(uuid, handle: handle, provider: provider.id)], from: requester)
        return uuid.apiString
    }

    func id(_ value: UInt64, _ what: String) throws -> Int64 {
        guard let id = Int64(exactly: value), id > 0 else { throw DBusError.invalidArgs("\(value) is not a \(what) id") }
        return id
    }

    func recentsInterface() -> Interface {
        typealias API = Telephony1.Recents
        return Interface(API.interface) {
            method(API.list) { service, _, limit, offset in
                try service.withHistory { try $0.recents(limit: Int(min(limit, 10_000)), offset: Int(offset)) }.map(Self.encode)
            }
            method(API.delete) { service, _, id in
                let id = try service.id(id, "recent call")
                guard try service.withHistory({ try $0.deleteRecent(id: id) }) else { throw DBusError.invalidArgs("no recent call has id \(id)") }
                service.rootChanged([API.missedCount])
            }
            method(API.clear) { service, _ in
                try service.withHistory { try $0.clearRecents() }
                service.rootChanged([API.missedCount])
            }
            method(API.markAllSeen) { service, _ in
                try service.withHistory { try $0.markAllSeen() }
                service.rootChanged([API.missedCount])
            }
            method(API.callBack) { service, call, id in
                let id = try service.id(id, "recent call")
                guard let entry = try service.withHistory({ try $0.recent(id: id) }) else { throw DBusError.invalidArgs("no recent call has id \(id)") }
                let handle = Handle(type: HandleType(rawValue: entry.handleType) ?? .generic, value: entry.handle)
                return try service.startCall(to: handle, through: entry.providerName, from: call.sender)
            }
            property(API.missedCount) { service in UInt32(clamping: (try? service.withHistory { try $0.missedCount() }) ?? 0) }
            Signal(API.entryAdded)
        }
    }

    func favoritesInterface() -> Interface {
        typealias API = Telephony1.Favorites
        return Interface(API.interface) {
            method(API.add) { service, _, handle, type, name, providerName in
                guard !handle.isEmpty, handle.utf8.count <= 1024, name.utf8.count <= 1024, providerName.utf8.count <= 64 else {
                    throw DBusError.invalidArgs("a favorite needs a handle of 1 to 1024 bytes, a name up to 1024 and a provider name up to 64")
                }
                _ = try Decode.handleType(type)
                let favorite = try service.withHistory {
                    try $0.addFavorite(Favorite(handle: handle, handleType: type, name: name, providerName: providerName))
                }
                service.loadFavoriteNames()
                return UInt64(favorite.id ?? 0)
            }
            method(API.remove) { service, _, id in
                let id = try service.id(id, "favorite")
                guard try service.withHistory({ try $0.removeFavorite(id: id) }) else { throw DBusError.invalidArgs("no favorite has id \(id)") }
                service.loadFavoriteNames()
            }
            method(API.list) { service, _ in try service.withHistory { try $0.favorites() }.map(Self.encode) }
            method(API.call) { service, call, id in
                let id = try service.id(id, "favorite")
                guard let favorite = try service.withHistory({ try $0.favorite(id: id) }) else { throw DBusError.invalidArgs("no favorite has id \(id)") }
                let handle = Handle(type: HandleType(rawValue: favorite.handleType) ?? .generic, value: favorite.handle)
                return try service.startCall(to: handle, through: favorite.providerName, from: call.sender)
            }
        }
    }
}
