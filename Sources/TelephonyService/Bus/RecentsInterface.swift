import CallHistory
import DBus
import FoundationEssentials
import MonkeyCallAPI
import TelephonyCore

/// `Recents` on the root object, and what records it: calls are recorded as they end or as
/// screening refuses them before they ring (both the switchboard's events), and each
/// entry is announced once written. The missed count lives in `HistoryStore`.
@TelephonyActor
final class RecentsInterface: HistoryInterface, SwitchboardObserver {
    let context: ServiceContext
    let controller: CallControllerInterface
    private let listed = ListedPage<Telephony1.RecentEntry>()

    init(context: ServiceContext, controller: CallControllerInterface) {
        self.context = context
        self.controller = controller
    }

    func observe(_ event: SwitchboardEvent) {
        switch event {
        case .callRemoved(let call): recordEnded(call)
        case .callRefused(let call): recordRefused(call)
        default: break
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
    private func recordEnded(_ call: Call) {
        guard let history = context.history else { return }
        if let provider = context.switchboard.provider(call.provider), !provider.configuration.includesCallsInRecents { return }
        let entry = RecentCall(callUUID: call.uuid.apiString, providerName: call.providerName, handle: call.handle.value,
                               handleType: call.handle.type.rawValue, callerName: call.displayName, outgoing: call.outgoing,
                               status: Self.status(of: call), endReason: call.endReason?.rawValue ?? "", startedAt: call.startedAt,
                               connectedAt: call.connectedAt, endedAt: call.endedAt, hasVideo: call.hasVideo,
                               appID: context.switchboard.provider(call.provider)?.appID ?? "")
        store(entry, in: history)
    }

    /// Records an entry and announces it once written (EntryAdded, and MissedCount for a missed call).
    private func store(_ entry: RecentCall, in history: HistoryStore) {
        history.record(entry) { [weak self] recorded, missedCountChanged in
            guard let self else { return }
            do {
                try context.objects.exportedObject(at: Telephony1.rootPath)?.emit(Telephony1.Recents.entryAdded, Self.encode(recorded).entries)
            } catch {
                context.logger.error("cannot announce Recents entry \(entry.callUUID): \(error)")
            }
            if missedCountChanged { context.rootChanged([Telephony1.Recents.missedCount]) }
        }
    }

    /// A write left this many missed calls unseen: MissedCount changes.
    private func missedCountChanged(_ count: Int) {
        context.history?.missedCount = count
        context.rootChanged([Telephony1.Recents.missedCount])
    }

    /// A call refused before it rang (blocked, held back by Do Not Disturb, silenced) still goes in Recents.
    private func recordRefused(_ call: RefusedCall) {
        guard let history = context.history, call.provider.configuration.includesCallsInRecents else { return }
        let entry = RecentCall(callUUID: call.uuid.apiString, providerName: call.provider.name, handle: call.handle.value,
                               handleType: call.handle.type.rawValue, callerName: call.displayName, outgoing: false, status: call.status,
                               endReason: "", startedAt: call.at, connectedAt: 0, endedAt: call.at, hasVideo: false, appID: call.provider.appID)
        store(entry, in: history)
    }

    nonisolated static func encode(_ entry: RecentCall) -> Telephony1.RecentEntry {
        var record = Telephony1.RecentEntry()
        (record.id, record.callUUID, record.providerName, record.appID) = (UInt64(entry.id ?? 0), entry.callUUID, entry.providerName, entry.appID)
        (record.handle, record.handleType, record.callerName, record.outgoing) = (entry.handle, entry.handleType, entry.callerName, entry.outgoing)
        (record.status, record.endReason, record.hasVideo, record.seen) = (entry.status.rawValue, entry.endReason, entry.hasVideo, entry.seen)
        (record.startedAt, record.connectedAt, record.endedAt) = (entry.startedAt, entry.connectedAt, entry.endedAt)
        return record
    }

    func interface() -> Interface {
        typealias API = Telephony1.Recents
        return Interface(API.interface) {
            methodReplyingLater(API.list) { recents, reply, limit, offset in
                let (limit, offset) = (Int(min(limit, 10_000)), Int(clamping: offset))
                _ = try recents.answer(reply.call, listed: recents.listed, key: [limit, offset], reading: {
                    try $0.recents(limit: limit, offset: offset).map(Self.encode)
                })
            }
            methodReplyingLater(API.delete) { recents, reply, id in
                let id = try Self.id(id, "recent call")
                _ = try recents.answer(reply.call, writing: { history in
                    (try history.removeRecent(id: id) != nil, try history.missedCount(), try HistoryStore.recentHandles(history))
                }) { recents, result in
                    guard result.0 else { throw DBusError.invalidArgs("no recent call has id \(id)") }
                    recents.context.history?.reloadKnown(result.2)
                    recents.missedCountChanged(result.1)
                    return []
                }
            }
            methodReplyingLater(API.clear) { recents, reply in
                _ = try recents.answer(reply.call, writing: { history in
                    try history.clearRecents()
                    return (try history.missedCount(), try HistoryStore.recentHandles(history))
                }) { recents, result in
                    recents.context.history?.reloadKnown(result.1)
                    recents.missedCountChanged(result.0)
                    return []
                }
            }
            methodReplyingLater(API.markAllSeen) { recents, reply in
                _ = try recents.answer(reply.call, writing: { try $0.markAllSeen(); return try $0.missedCount() }) { recents, missed in
                    recents.missedCountChanged(missed)
                    return []
                }
            }
            methodReplyingLater(API.callBack) { recents, reply, id in
                try recents.call(reply, id, "recent call") { history, id in
                    try history.recent(id: id).map { ($0.handle, $0.handleType, Provider.appKey(appID: $0.appID, name: $0.providerName)) }
                }
            }
            property(API.missedCount) { recents in UInt32(clamping: recents.context.history?.missedCount ?? 0) }
            Signal(API.entryAdded)
        }
    }

}
