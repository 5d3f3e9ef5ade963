import DBus

/// A partial change to a call's details: only the properties that were set
/// are sent, the others stay as they are (CallKit's `CXCallUpdate`).
public final class CXCallUpdate: @unchecked Sendable {
    private var changed: Set<String> = []

    /// The other party.
    public var remoteHandle: CXHandle? { didSet { changed.insert("Handle") } }
    /// The caller's name as the app knows it.
    public var localizedCallerName: String? { didSet { changed.insert("LocalizedCallerName") } }
    public var supportsHolding: Bool = true { didSet { changed.insert("SupportsHolding") } }
    public var supportsGrouping: Bool = false { didSet { changed.insert("SupportsGrouping") } }
    public var supportsUngrouping: Bool = false { didSet { changed.insert("SupportsUngrouping") } }
    public var supportsDTMF: Bool = true { didSet { changed.insert("SupportsDTMF") } }
    public var hasVideo: Bool = false { didSet { changed.insert("HasVideo") } }

    public init() {}

    /// The update as the API's `a{sv}`: the keys that were set, no others.
    var dbusValue: DBusValue { .vardict(entries) }

    var entries: [String: DBusValue] {
        var entries: [String: DBusValue] = [:]
        if changed.contains("Handle"), let handle = remoteHandle {
            entries["Handle"] = .string(handle.value)
            entries["HandleType"] = .string(handle.type.apiName)
        }
        if changed.contains("LocalizedCallerName"), let name = localizedCallerName { entries["LocalizedCallerName"] = .string(name) }
        if changed.contains("SupportsHolding") { entries["SupportsHolding"] = .bool(supportsHolding) }
        if changed.contains("SupportsGrouping") { entries["SupportsGrouping"] = .bool(supportsGrouping) }
        if changed.contains("SupportsUngrouping") { entries["SupportsUngrouping"] = .bool(supportsUngrouping) }
        if changed.contains("SupportsDTMF") { entries["SupportsDTMF"] = .bool(supportsDTMF) }
        if changed.contains("HasVideo") { entries["HasVideo"] = .bool(hasVideo) }
        return entries
    }
}
