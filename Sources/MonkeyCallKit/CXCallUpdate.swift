import DBus
import MonkeyCallAPI

/// A partial change to a call's details: only the properties that were set
/// are sent, the others stay as they are (CallKit's `CXCallUpdate`).
public final class CXCallUpdate: @unchecked Sendable {
    private var changed: Set<String> = []

    /// The other party.
    public var remoteHandle: CXHandle? { didSet { changed.insert(Telephony1.Key.handle) } }
    /// The caller's name as the app knows it.
    public var localizedCallerName: String? { didSet { changed.insert(Telephony1.Key.localizedCallerName) } }
    public var supportsHolding: Bool = true { didSet { changed.insert(Telephony1.Key.supportsHolding) } }
    public var supportsGrouping: Bool = false { didSet { changed.insert(Telephony1.Key.supportsGrouping) } }
    public var supportsUngrouping: Bool = false { didSet { changed.insert(Telephony1.Key.supportsUngrouping) } }
    public var supportsDTMF: Bool = true { didSet { changed.insert(Telephony1.Key.supportsDTMF) } }
    public var hasVideo: Bool = false { didSet { changed.insert(Telephony1.Key.hasVideo) } }

    public init() {}

    /// The update as the API's `a{sv}`: the keys that were set, no others.
    var dbusValue: DBusValue { .vardict(entries) }

    var entries: [String: DBusValue] {
        var entries: [String: DBusValue] = [:]
        if changed.contains(Telephony1.Key.handle), let handle = remoteHandle {
            entries[Telephony1.Key.handle] = .string(handle.value)
            entries[Telephony1.Key.handleType] = .string(handle.type.apiName)
        }
        if changed.contains(Telephony1.Key.localizedCallerName), let name = localizedCallerName { entries[Telephony1.Key.localizedCallerName] = .string(name) }
        if changed.contains(Telephony1.Key.supportsHolding) { entries[Telephony1.Key.supportsHolding] = .bool(supportsHolding) }
        if changed.contains(Telephony1.Key.supportsGrouping) { entries[Telephony1.Key.supportsGrouping] = .bool(supportsGrouping) }
        if changed.contains(Telephony1.Key.supportsUngrouping) { entries[Telephony1.Key.supportsUngrouping] = .bool(supportsUngrouping) }
        if changed.contains(Telephony1.Key.supportsDTMF) { entries[Telephony1.Key.supportsDTMF] = .bool(supportsDTMF) }
        if changed.contains(Telephony1.Key.hasVideo) { entries[Telephony1.Key.hasVideo] = .bool(hasVideo) }
        return entries
    }
}
