import FoundationEssentials
import Localization
import MonkeyCallAPI

/// One row of Recents as the window shows it.
public struct RecentRow: Equatable, Sendable {
    public let id: UInt64
    /// The caller's name, else the number.
    public let title: String
    /// App, direction and status: "PyPhone · Missed".
    public let subtitle: String
    public let time: String
    public let missed: Bool
    /// Duration and end reason, for the details.
    public let details: String
    /// What a screen reader says for the row.
    public let accessibleLabel: String
}

/// Recents: All or Missed, newest first, with the missed count; loaded a page at a time.
public final class RecentsModel: ModelPart {
    public enum Filter: Sendable { case all, missed }

    public private(set) var entries: [Telephony1.RecentEntry] = []
    public private(set) var missedCount: UInt32 = 0
    public var filter: Filter = .all { didSet { if filter != oldValue { onChange() } } }
    /// Whether the service has more than `entries` (another page to load).
    public private(set) var hasMore = false
    public var onMissedCountChange: () -> Void = {}
    public static let pageSize: UInt32 = 200

    public var rows: [RecentRow] {
        entries.filter { filter == .all || RecentStatus(rawValue: $0.status) == .missed }.map(Self.row)
    }

    public func load() async {
        do {
            heardWhileLoading = []
            let page = try await backend.recents(limit: Self.pageSize, offset: 0)
            // Entries announced while the page was on its way stay, newest first.
            let heard = heardWhileLoading ?? []
            heardWhileLoading = nil
            entries = heard.reversed().filter { entry in !page.contains { $0.id == entry.id } } + page
            hasMore = page.count == Int(Self.pageSize)
            onChange()
            // An answer that left the service before a MissedCount change the app has heard is stale:
            // the signal and the reply reach the main actor in either order.
            let changes = missedCountChanges
            let count = try await backend.missedCount()
            if missedCountChanges == changes { setMissedCount(count) }
        } catch {
            heardWhileLoading = nil
            report.error(error)
        }
    }

    /// Entries the service announced (EntryAdded) while a page was loading, oldest first; nil when none loads.
    private var heardWhileLoading: [Telephony1.RecentEntry]?
    /// MissedCount changes announced by the service.
    private var missedCountChanges = 0

    /// The service announced MissedCount.
    func missedCountChanged(_ count: UInt32) {
        missedCountChanges += 1
        setMissedCount(count)
    }

    /// The next page, when the list is scrolled to its end.
    public func loadMore() async {
        guard hasMore else { return }
        await change {
            let page = try await backend.recents(limit: Self.pageSize, offset: UInt32(entries.count))
            let known = Set(entries.map(\.id))
            entries += page.filter { !known.contains($0.id) }
            hasMore = page.count == Int(Self.pageSize)
        }
    }

    func added(_ entry: Telephony1.RecentEntry) {
        heardWhileLoading?.append(entry)
        guard !entries.contains(where: { $0.id == entry.id }) else { return }
        entries.insert(entry, at: 0)
        onChange()
    }

    func setMissedCount(_ count: UInt32) {
        guard count != missedCount else { return }
        missedCount = count
        onMissedCountChange()
    }

    /// The user looked at Recents: the missed calls are seen.
    public func markSeen() async {
        guard missedCount > 0 else { return }
        do { try await backend.markAllSeen() } catch { report.error(error) }
    }

    /// Calls back through the same app; the new call's UUID.
    @discardableResult
    public func callBack(_ id: UInt64) async -> String? {
        do { return try await backend.callBack(id) } catch {
            report.error(error)
            return nil
        }
    }

    public func delete(_ id: UInt64) async {
        await change {
            try await backend.deleteRecent(id)
            entries.removeAll { $0.id == id }
        }
    }

    public func clear() async {
        await change {
            try await backend.clearRecents()
            entries = []
            hasMore = false
        }
    }

    public func entry(_ id: UInt64) -> Telephony1.RecentEntry? { entries.first { $0.id == id } }

    public static func row(_ entry: Telephony1.RecentEntry) -> RecentRow {
        let handle = Format.clean(entry.handle)
        let name = Format.clean(entry.callerName)
        let title = name.isEmpty || name == handle ? handle : name
        let status = Format.status(entry.status, outgoing: entry.outgoing)
        let app = Format.clean(entry.providerName)
        let subtitle = tr("%1$s · %2$s", app, status)
        var details: [String] = []
        if entry.connectedAt > 0, entry.endedAt >= entry.connectedAt {
            details.append(tr("Duration %1$s", Format.duration(seconds: (entry.endedAt - entry.connectedAt) / 1_000_000)))
        }
        details.append(Format.endReason(entry.endReason))
        if title != handle { details.append(handle) }
        let time = Format.time(micros: entry.endedAt > 0 ? entry.endedAt : entry.startedAt)
        return RecentRow(id: entry.id, title: title, subtitle: subtitle, time: time, missed: RecentStatus(rawValue: entry.status) == .missed,
                         details: details.joined(separator: " · "),
                         accessibleLabel: tr("%1$s, %2$s, %3$s", title, subtitle, time))
    }
}
