import FoundationEssentials
import ScreenText

/// A provider's number, assigned from 1 upward and never reused while the
/// `Switchboard` lives (the service's `/Provider/<n>`).
public struct ProviderID: RawRepresentable, Hashable, Comparable, Sendable, CustomStringConvertible, ExpressibleByIntegerLiteral {
    public let rawValue: UInt64
    public init(rawValue: UInt64) { self.rawValue = rawValue }
    public init(_ rawValue: UInt64) { self.rawValue = rawValue }
    public init(integerLiteral value: UInt64) { self.rawValue = value }
    public static func < (lhs: ProviderID, rhs: ProviderID) -> Bool { lhs.rawValue < rhs.rawValue }
    public var description: String { String(rawValue) }
}

/// CallKit's CXProviderConfiguration, with CallKit's defaults.
public struct ProviderConfiguration: Hashable, Sendable {
    /// Shown to the user; required, 1–64 characters.
    public var name: String
    public var maximumCallGroups: Int = 2
    public var maximumCallsPerCallGroup: Int = 5
    public var supportsVideo: Bool = false
    public var supportedHandleTypes: Set<HandleType> = Set(HandleType.allCases)
    public var includesCallsInRecents: Bool = true
    /// A sound file path or an XDG sound name; empty means the default ringtone.
    public var ringtoneSound: String = ""
    public var iconName: String = ""
    /// PNG data, at most 256 KiB.
    public var iconData: [UInt8] = []
    public var urlSchemes: [String] = []
    /// Desktop-file id, for notifications.
    public var desktopEntry: String = ""

    public init(
        name: String,
        maximumCallGroups: Int = 2,
        maximumCallsPerCallGroup: Int = 5,
        supportsVideo: Bool = false,
        supportedHandleTypes: Set<HandleType> = Set(HandleType.allCases),
        includesCallsInRecents: Bool = true,
        ringtoneSound: String = "",
        iconName: String = "",
        iconData: [UInt8] = [],
        urlSchemes: [String] = [],
        desktopEntry: String = ""
    ) {
        self.name = name
        self.maximumCallGroups = maximumCallGroups
        self.maximumCallsPerCallGroup = maximumCallsPerCallGroup
        self.supportsVideo = supportsVideo
        self.supportedHandleTypes = supportedHandleTypes
        self.includesCallsInRecents = includesCallsInRecents
        self.ringtoneSound = ringtoneSound
        self.iconName = iconName
        self.iconData = iconData
        self.urlSchemes = urlSchemes
        self.desktopEntry = desktopEntry
    }

    /// Checks every field; the error is `.invalidArguments` naming the API key.
    public func validate() throws(TelephonyError) {
        // Bytes first: a letter with a million combining marks is one Character, and 2 MB.
        let nameBytes = name.utf8.count
        guard nameBytes <= SwitchboardLimits.maximumProviderNameBytes else {
            throw .invalidArguments("Name is \(nameBytes) bytes of UTF-8; the limit is \(SwitchboardLimits.maximumProviderNameBytes) "
                + "(and \(SwitchboardLimits.maximumProviderNameCharacters) characters).")
        }
        let nameLength = name.count
        guard nameLength >= 1, nameLength <= SwitchboardLimits.maximumProviderNameCharacters else {
            throw .invalidArguments("Name must be 1 to \(SwitchboardLimits.maximumProviderNameCharacters) characters long, not \(nameLength).")
        }
        guard !name.trimmingWhitespace().isEmpty else {
            throw .invalidArguments("Name must not be blank.")
        }
        guard !name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw .invalidArguments("Name must not contain control characters.")
        }
        guard maximumCallGroups >= 1, maximumCallGroups <= 1_000 else {
            throw .invalidArguments("MaximumCallGroups must be between 1 and 1000, not \(maximumCallGroups).")
        }
        guard maximumCallsPerCallGroup >= 1, maximumCallsPerCallGroup <= 1_000 else {
            throw .invalidArguments("MaximumCallsPerCallGroup must be between 1 and 1000, not \(maximumCallsPerCallGroup).")
        }
        guard !supportedHandleTypes.isEmpty else {
            throw .invalidArguments("SupportedHandleTypes must name at least one of generic, phone-number, email-address.")
        }
        let limit = SwitchboardLimits.maximumConfigurationStringBytes
        for (key, value) in [("RingtoneSound", ringtoneSound), ("IconName", iconName), ("DesktopEntry", desktopEntry)]
        where value.utf8.count > limit {
            throw .invalidArguments("\(key) is \(value.utf8.count) bytes long; the limit is \(limit).")
        }
        guard iconData.count <= SwitchboardLimits.maximumIconDataBytes else {
            throw .invalidArguments("IconData is \(iconData.count) bytes; the limit is \(SwitchboardLimits.maximumIconDataBytes) (256 KiB).")
        }
        if !iconData.isEmpty {
            // From the header, before anything decodes it: a 50 KB PNG can be 20000×20000 pixels.
            guard let size = PNGHeader.size(of: iconData) else {
                throw .invalidArguments("IconData is not a PNG image (no PNG signature and IHDR chunk).")
            }
            let limit = SwitchboardLimits.maximumIconPixels
            guard size.width >= 1, size.height >= 1, size.width <= limit, size.height <= limit else {
                throw .invalidArguments("IconData is a PNG of \(size.width)×\(size.height) pixels; the limit is \(limit)×\(limit).")
            }
        }
        guard urlSchemes.count <= SwitchboardLimits.maximumURLSchemes else {
            throw .invalidArguments("URLSchemes has \(urlSchemes.count) entries; the limit is \(SwitchboardLimits.maximumURLSchemes).")
        }
        for scheme in urlSchemes where !Self.isValidScheme(scheme) {
            throw .invalidArguments("URLSchemes entry \"\(scheme.prefix(64))\" is not a URL scheme (a letter, then letters, digits, +, - or .).")
        }
    }

    /// RFC 3986: ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ), here at most 64 long.
    static func isValidScheme(_ scheme: String) -> Bool {
        let bytes = Array(scheme.utf8)
        guard let first = bytes.first, bytes.count <= 64, first.isASCIILetter else { return false }
        return bytes.allSatisfy { $0.isASCIILetter || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x2B || $0 == 0x2D || $0 == 0x2E }
    }

    func supports(_ type: HandleType) -> Bool { supportedHandleTypes.contains(type) }

    /// A sandboxed app names its sound and icon by XDG name only: a path or URL would be opened by
    /// the notification server on the host, outside the app's sandbox (a FIFO, a huge file).
    /// Its own icon comes as `IconData`.
    public func validateForSandboxedApp() throws(TelephonyError) {
        for (key, value) in [("RingtoneSound", ringtoneSound), ("IconName", iconName)] where !value.isEmpty && !Self.isXDGName(value) {
            throw .invalidArguments("\(key) must be an XDG sound or icon name (letters, digits, '-', '_', '.'), not a path or URL, "
                + "for a sandboxed app; send the app's own icon as IconData.")
        }
    }

    /// An icon or sound theme name: ASCII letters, digits, `-`, `_` and `.`, not starting with a dot.
    static func isXDGName(_ value: String) -> Bool {
        let bytes = Array(value.utf8)
        guard let first = bytes.first, first != 0x2E, bytes.count <= 255 else { return false }
        return bytes.allSatisfy { $0.isASCIILetter || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x2D || $0 == 0x5F || $0 == 0x2E }
    }
}

/// The dimensions of a PNG, from its signature and IHDR chunk, without decoding it.
enum PNGHeader {
    static let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

    static func size(of data: [UInt8]) -> (width: UInt32, height: UInt32)? {
        // Signature, IHDR's length (13) and type, then width and height, big-endian.
        guard data.count >= 33, Array(data[0..<8]) == signature,
              data[8..<16].elementsEqual([0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52]) else { return nil }
        func word(_ offset: Int) -> UInt32 { data[offset..<offset + 4].reduce(0) { $0 << 8 | UInt32($1) } }
        return (word(16), word(20))
    }
}

extension UInt8 {
    fileprivate var isASCIILetter: Bool { (self >= 0x41 && self <= 0x5A) || (self >= 0x61 && self <= 0x7A) }
}

/// One registration of a VOIP app.
public struct Provider: Hashable, Sendable, Identifiable {
    public let id: ProviderID
    /// The bus unique name of the connection that registered it.
    public let owner: String
    /// The sandboxed app behind that connection (a Flatpak app id, `snap.NAME`); "" for a host app.
    public let appID: String
    /// Who pays for it: the account of the connection that registered it (`Caller.account`: a
    /// sandboxed app, or a host process whatever Names it chooses); "" when not known.
    public var process: String = ""
    /// How the user knows the app, set by whoever registers it: a host app's Name; a sandboxed
    /// app's exported desktop-file Name, else its app id, with its chosen Name only beside it
    /// (a Flatpak that calls itself "Your Bank" rings as itself). "" : its Name.
    public var appLabel: String = ""
    public let configuration: ProviderConfiguration
    /// Its live calls, in the order they began.
    public internal(set) var callUUIDs: [UUID]

    public var name: String { configuration.name }
    /// What the app's own state is keyed by (directories, URL schemes, routing): the app id of a
    /// sandboxed app, which no other app can claim; the chosen `Name` of a host app, trusted as
    /// far as the session bus is.
    public var appKey: String { Self.appKey(appID: appID, name: name) }

    /// A host Name that looks like an app id (reverse-DNS, or `snap.NAME`: it has a dot) is marked
    /// as a host's, `host:NAME`, so that it never shares a sandboxed app's key; no app id has a colon.
    public static func appKey(appID: String, name: String) -> String {
        if !appID.isEmpty { return appID }
        return name.contains(".") ? "host:" + name : name
    }
    public var isSandboxed: Bool { !appID.isEmpty }
    /// What the per-app limits (flood guard, ringing share, registrations) are counted against: the
    /// sandboxed app's id, else the host app's Name, marked as a host's so that a host Name never
    /// shares a sandboxed app's account. Never the provider: more providers get no more share.
    public var appAccount: String { Self.appAccount(appID: appID, name: name) }

    public static func appAccount(appID: String, name: String) -> String { appID.isEmpty ? "host:" + name : appID }
}
