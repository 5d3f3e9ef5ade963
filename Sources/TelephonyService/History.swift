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
                               connectedAt: call.connectedAt, endedAt: call.endedAt, hasVideo: call.hasVideo,
                               appID: switchboard.provider(call.provider)?.appID ?? "")
        store(entry, in: history)
    }

    /// Records an entry and announces it once written (EntryAdded, and MissedCount for a missed call).
    private func store(_ entry: RecentCall, in history: HistoryStore) {
        history.record(entry) { [weak self] recorded in
            guard let self else { return }
            do {
                try connection.exportedObject(at: Telephony1.rootPath)?.emit(Telephony1.Recents.entryAdded, Self.encode(recorded))
            } catch {
                logger.error("cannot announce Recents entry \(entry.callUUID): \(error)")
            }
            if recorded.status == .missed { rootChanged([Telephony1.Recents.missedCount]) }
        }
    }

    /// A write left this many missed calls unseen: MissedCount changes.
    func missedCountChanged(_ count: Int) {
        history?.missedCount = count
        rootChanged([Telephony1.Recents.missedCount])
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
                               endedAt: now, hasVideo: false, appID: provider.appID)
        store(entry, in: history)
    }

    static func encode(_ entry: RecentCall) -> [String: DBusValue] {
        [
            Telephony1.Key.appId: .string(entry.appID), Telephony1.Key.id: .uint64(UInt64(entry.id ?? 0)), Telephony1.Key.callUUID: .string(entry.callUUID), Telephony1.Key.providerName: .string(entry.providerName),
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

    /// A call to `handle` through the app `appKey` (a sandboxed app's id, a host app's Name): an app
    /// that registers another's Name does not receive its calls.
    func startCall(to handle: Handle, through appKey: String, from requester: String) throws -> String {
        guard let provider = switchboard.orderedProviders.last(where: { $0.appKey == appKey }) else {
            throw APIError.noProvider("\(appKey) is not running, so it cannot place the call")
        }
        let uuid = UUID()
        _ = try request([.start(uuid, handle: handle, provider: provider.id)], from: requester)
        return uuid.apiString
    }

    func id(_ value: UInt64, _ what: String) throws -> Int64 {
        guard let id = Int64(exactly: value), id > 0 else { throw DBusError.invalidArgs("\(value) is not a \(what) id") }
        return id
    }

    /// `CallBack` and `Favorites.Call`: what to call (handle, handle type, app) is read on the
    /// database's executor, then called through the app that placed or saved it.
    private func call(_ reply: Reply<String>, _ id: UInt64, _ what: String,
                      reading target: @escaping @Sendable (CallHistory, Int64) throws -> (handle: String, type: String, provider: String)?) throws {
        let id = try self.id(id, what)
        _ = try answer(reply.call, reading: { try target($0, id) }) { service, target in
            guard let target else { throw DBusError.invalidArgs("no \(what) has id \(id)") }
            let handle = Handle(type: HandleType(rawValue: target.type) ?? .generic, value: target.handle)
            return [.string(try service.startCall(to: handle, through: target.provider, from: reply.call.sender))]
        }
    }

    func recentsInterface() -> Interface {
        typealias API = Telephony1.Recents
        return Interface(API.interface) {
            methodReplyingLater(API.list) { service, reply, limit, offset in
                _ = try service.answer(reply.call, reading: { [try $0.recents(limit: Int(min(limit, 10_000)), offset: Int(offset)).map(Self.encode).dbusValue] })
            }
            methodReplyingLater(API.delete) { service, reply, id in
                let id = try service.id(id, "recent call")
                _ = try service.answer(reply.call, writing: { history in
                    (try history.removeRecent(id: id) != nil, try history.missedCount(), try HistoryStore.recentHandles(history))
                }) { service, result in
                    guard result.0 else { throw DBusError.invalidArgs("no recent call has id \(id)") }
                    service.history?.reloadKnown(result.2)
                    service.missedCountChanged(result.1)
                    return []
                }
            }
            methodReplyingLater(API.clear) { service, reply in
                _ = try service.answer(reply.call, writing: { history in
                    try history.clearRecents()
                    return (try history.missedCount(), try HistoryStore.recentHandles(history))
                }) { service, result in
                    service.history?.reloadKnown(result.1)
                    service.missedCountChanged(result.0)
                    return []
                }
            }
            methodReplyingLater(API.markAllSeen) { service, reply in
                _ = try service.answer(reply.call, writing: { try $0.markAllSeen(); return try $0.missedCount() }) { service, missed in
                    service.missedCountChanged(missed)
                    return []
                }
            }
            methodReplyingLater(API.callBack) { service, reply, id in
                try service.call(reply, id, "recent call") { history, id in
                    try history.recent(id: id).map { ($0.handle, $0.handleType, $0.appID.isEmpty ? $0.providerName : $0.appID) }
                }
            }
            property(API.missedCount) { service in UInt32(clamping: service.history?.missedCount ?? 0) }
            Signal(API.entryAdded)
        }
    }

    func favoritesInterface() -> Interface {
        typealias API = Telephony1.Favorites
        return Interface(API.interface) {
            methodReplyingLater(API.add) { service, reply, handle, type, name, providerName in
                guard !handle.isEmpty, handle.utf8.count <= 1024, name.utf8.count <= 1024, providerName.utf8.count <= 64 else {
                    throw DBusError.invalidArgs("a favorite needs a handle of 1 to 1024 bytes, a name up to 1024 and a provider name up to 64")
                }
                _ = try Decode.handleType(type)
                let favorite = Favorite(handle: handle, handleType: type, name: name, providerName: providerName)
                _ = try service.answer(reply.call, writing: { (try $0.addFavorite(favorite), try $0.favorites()) }) { service, result in
                    service.history?.setFavorites(result.1)
                    return [.uint64(UInt64(result.0.id ?? 0))]
                }
            }
            methodReplyingLater(API.remove) { service, reply, id in
                let id = try service.id(id, "favorite")
                _ = try service.answer(reply.call, writing: { (try $0.removeFavorite(id: id), try $0.favorites()) }) { service, result in
                    service.history?.setFavorites(result.1)
                    guard result.0 else { throw DBusError.invalidArgs("no favorite has id \(id)") }
                    return []
                }
            }
            methodReplyingLater(API.list) { service, reply in
                _ = try service.answer(reply.call, reading: { [try $0.favorites().map(Self.encode).dbusValue] })
            }
            methodReplyingLater(API.call) { service, reply, id in
                try service.call(reply, id, "favorite") { history, id in
                    try history.favorite(id: id).map { ($0.handle, $0.handleType, $0.providerName) }
                }
            }
        }
    }
}
