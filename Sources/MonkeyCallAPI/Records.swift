import DBus
@_exported import TelephonyVocabulary

/// The API's `a{sv}` records, each declared once (`VarDictRecord`): the service, MonkeyCallKit, the
/// CLI and the bridge read and write them through these types, never key by key. Values are as
/// the wire has them (strings for UUIDs and handle types); each side maps them to its own types.
extension Telephony1 {
    /// `RegisterProvider`'s configuration, with CallKit's defaults.
    public struct ProviderConfiguration: VarDictRecord, Equatable {
        public var name = ""
        public var maximumCallGroups: UInt32 = 2
        public var maximumCallsPerCallGroup: UInt32 = 5
        public var supportsVideo = false
        public var supportedHandleTypes = HandleTypes.all
        public var includesCallsInRecents = true
        /// A sound file path or an XDG sound name; nil or empty: `phone-incoming-call`.
        public var ringtoneSound: String?
        public var iconName: String?
        /// A PNG.
        public var iconData: [UInt8]?
        public var urlSchemes: [String] = []
        /// The desktop-file id of the app.
        public var desktopEntry: String?

        public init() {}

        public static let context = "configuration"
        public static var fields: [RecordField<Self>] {
            [.field(Key.name, \.name, required: true), .field(Key.maximumCallGroups, \.maximumCallGroups),
             .field(Key.maximumCallsPerCallGroup, \.maximumCallsPerCallGroup), .field(Key.supportsVideo, \.supportsVideo),
             .field(Key.supportedHandleTypes, \.supportedHandleTypes), .field(Key.includesCallsInRecents, \.includesCallsInRecents),
             .optional(Key.ringtoneSound, \.ringtoneSound), .optional(Key.iconName, \.iconName), .optional(Key.iconData, \.iconData),
             .field(Key.urlSchemes, \.urlSchemes), .optional(Key.desktopEntry, \.desktopEntry)]
        }
    }

    /// The handle types' names.
    public enum HandleTypes {
        public static let generic = HandleType.generic.rawValue, phoneNumber = HandleType.phoneNumber.rawValue,
                          emailAddress = HandleType.emailAddress.rawValue
        public static let all = [emailAddress, generic, phoneNumber]
    }

    /// A call update (`ReportNewIncomingCall`, `ReportCallUpdated`): only what is set changes.
    public struct CallUpdate: VarDictRecord, Equatable {
        public var handle: String?
        public var handleType: String?
        public var localizedCallerName: String?
        public var supportsHolding: Bool?
        public var supportsGrouping: Bool?
        public var supportsUngrouping: Bool?
        public var supportsDTMF: Bool?
        public var hasVideo: Bool?

        public init() {}

        public static let context = "update"
        public static var fields: [RecordField<Self>] {
            [.optional(Key.handle, \.handle), .optional(Key.handleType, \.handleType),
             .optional(Key.localizedCallerName, \.localizedCallerName), .optional(Key.supportsHolding, \.supportsHolding),
             .optional(Key.supportsGrouping, \.supportsGrouping), .optional(Key.supportsUngrouping, \.supportsUngrouping),
             .optional(Key.supportsDTMF, \.supportsDTMF), .optional(Key.hasVideo, \.hasVideo)]
        }
    }

    /// One entry of `Recents.List` and `EntryAdded`.
    public struct RecentEntry: VarDictRecord, Equatable {
        public var id: UInt64 = 0
        public var callUUID = ""
        public var providerName = ""
        public var appID = ""
        public var handle = ""
        public var handleType = ""
        public var callerName = ""
        public var outgoing = false
        /// `answered`, `missed`, `declined`, `blocked`, `filtered`, `failed` or `cancelled`.
        public var status = ""
        public var endReason = ""
        public var startedAt: UInt64 = 0
        public var connectedAt: UInt64 = 0
        public var endedAt: UInt64 = 0
        public var hasVideo = false
        public var seen = false

        public init() {}

        public static let context = "Recents entry"
        public static var fields: [RecordField<Self>] {
            [.field(Key.id, \.id), .field(Key.callUUID, \.callUUID), .field(Key.providerName, \.providerName), .field(Key.appId, \.appID),
             .field(Key.handle, \.handle), .field(Key.handleType, \.handleType), .field(Key.callerName, \.callerName),
             .field(Key.outgoing, \.outgoing), .field(Key.status, \.status), .field(Key.endReason, \.endReason),
             .field(Key.startedAt, \.startedAt), .field(Key.connectedAt, \.connectedAt), .field(Key.endedAt, \.endedAt),
             .field(Key.hasVideo, \.hasVideo), .field(Key.seen, \.seen)]
        }
    }

    /// One entry of `Favorites.List`.
    public struct Favorite: VarDictRecord, Equatable {
        public var id: UInt64 = 0
        public var handle = ""
        public var handleType = ""
        public var name = ""
        /// The app key of the app that calls it.
        public var providerName = ""

        public init() {}

        public static let context = "favorite"
        public static var fields: [RecordField<Self>] {
            [.field(Key.id, \.id), .field(Key.handle, \.handle), .field(Key.handleType, \.handleType),
             .field(Key.name, \.name), .field(Key.providerName, \.providerName)]
        }
    }

    /// One contact of `AddressBook.Search`.
    public struct Contact: VarDictRecord, Equatable {
        /// Stable while the contact exists.
        public var id = ""
        public var name = ""
        /// Each number with its label ("mobile", "home", "work"…, or ""), as written in the contact.
        public var numbers: [LabeledNumber] = []
        /// One of its numbers is a favorite.
        public var isFavorite = false

        public init() {}

        public static let context = "contact"
        public static var fields: [RecordField<Self>] {
            [.field(Key.id, \.id), .field(Key.name, \.name), .field(Key.numbers, \.numbers), .field(Key.isFavorite, \.isFavorite)]
        }
    }

    /// `ReportCallEnded`'s and `FulfillAction`'s info.
    public struct ActionInfo: VarDictRecord, Equatable {
        /// When it happened; 0 or absent: now.
        public var date: UInt64?

        public init() {}

        public static let context = "info"
        public static var fields: [RecordField<Self>] { [.optional(Key.date, \.date)] }
    }
}

extension Telephony1 {
    /// An action as a controller requests it (`RequestTransaction`'s `(kind, args)`) and as the
    /// provider receives it (`PerformAction`'s `kind` and `args`). The kinds are spelled here only.
    public struct Action: Equatable, Sendable {
        public enum Kind: Equatable, Sendable {
            /// `provider`: which provider places it (only in a request; else the service picks).
            case start(handle: String, handleType: String, video: Bool, contactIdentifier: String, provider: ObjectPath?)
            case answer
            case end
            case setHeld(Bool)
            case setMuted(Bool)
            /// `with`: the call to group with; "" takes the call out of its group.
            case setGroup(with: String)
            /// `type`: `single-tone`, `soft-pause` or `hard-pause`.
            case playDTMF(digits: String, type: String)

            /// The kinds' names on the bus (the shared vocabulary's).
            public typealias Name = ActionName

            public var kindName: Name {
                switch self {
                case .start: .start
                case .answer: .answer
                case .end: .end
                case .setHeld: .setHeld
                case .setMuted: .setMuted
                case .setGroup: .setGroup
                case .playDTMF: .playDTMF
                }
            }

            public var name: String { kindName.rawValue }

            public static let names = Name.allCases.map(\.rawValue)
        }

        public var callUUID: String
        public var kind: Kind
        /// The transaction the action belongs to (`PerformAction` only).
        public var transactionUUID: String?

        public init(callUUID: String, kind: Kind, transactionUUID: String? = nil) {
            self.callUUID = callUUID
            self.kind = kind
            self.transactionUUID = transactionUUID
        }

        /// Reads an action of kind `name`; a missing argument the kind needs, or an unknown kind, is
        /// `InvalidArgs` naming it.
        public init(kind name: String, arguments entries: [String: DBusValue]) throws(DBusError) {
            let args = try Arguments(entries: entries, context: "\(name) action")
            func required<T: DBusRepresentable>(_ value: T?, _ key: String) throws(DBusError) -> T {
                guard let value else { throw DBusError.invalidArgs("\(name) action needs '\(key)' (\(T.dbusSignature))") }
                return value
            }
            guard let kindName = Kind.Name(rawValue: name) else {
                throw DBusError.invalidArgs("unknown action kind '\(name.prefix(64))' (\(Kind.names.joined(separator: ", ")))")
            }
            let kind: Kind
            switch kindName {
            case .start:
                kind = .start(handle: try required(args.handle, Key.handle), handleType: args.handleType ?? HandleTypes.generic,
                              video: args.video ?? false, contactIdentifier: args.contactIdentifier ?? "", provider: args.provider)
            case .answer: kind = .answer
            case .end: kind = .end
            case .setHeld: kind = .setHeld(try required(args.onHold, Key.onHold))
            case .setMuted: kind = .setMuted(try required(args.muted, Key.muted))
            case .setGroup: kind = .setGroup(with: try required(args.groupWith, Key.groupWith))
            case .playDTMF: kind = .playDTMF(digits: try required(args.digits, Key.digits), type: args.type ?? DTMFType.singleTone.rawValue)
            }
            self.init(callUUID: try required(args.callUUID, Key.callUUID), kind: kind, transactionUUID: args.transactionUUID)
        }

        /// The action's `args`.
        public var arguments: [String: DBusValue] {
            var args = Arguments()
            args.callUUID = callUUID
            args.transactionUUID = transactionUUID
            switch kind {
            case .start(let handle, let handleType, let video, let contactIdentifier, let provider):
                (args.handle, args.handleType, args.video, args.provider) = (handle, handleType, video, provider)
                args.contactIdentifier = contactIdentifier
            case .answer, .end: break
            case .setHeld(let onHold): args.onHold = onHold
            case .setMuted(let muted): args.muted = muted
            case .setGroup(let other): args.groupWith = other
            case .playDTMF(let digits, let type): (args.digits, args.type) = (digits, type)
            }
            return args.entries
        }

        /// Every key any kind of action takes, declared once.
        struct Arguments: VarDictRecord {
            var callUUID: String?, transactionUUID: String?
            var handle: String?, handleType: String?, video: Bool?, contactIdentifier: String?, provider: ObjectPath?
            var onHold: Bool?, muted: Bool?, groupWith: String?, digits: String?, type: String?

            init() {}

            init(entries: [String: DBusValue], context: String) throws(DBusError) {
                do throws(DBusError) {
                    try self.init(entries: entries)
                } catch {
                    // Named by the action's kind rather than "action".
                    let message = error.message
                    throw DBusError.invalidArgs(message.hasPrefix(Self.context) ? context + message.dropFirst(Self.context.count) : message)
                }
            }

            static let context = "action"
            static var fields: [RecordField<Self>] {
                [.optional(Key.callUUID, \.callUUID), .optional(Key.transactionUUID, \.transactionUUID), .optional(Key.handle, \.handle),
                 .optional(Key.handleType, \.handleType), .optional(Key.video, \.video), .optional(Key.contactIdentifier, \.contactIdentifier),
                 .optional(Key.provider, \.provider), .optional(Key.onHold, \.onHold), .optional(Key.muted, \.muted),
                 .optional(Key.groupWith, \.groupWith), .optional(Key.digits, \.digits), .optional(Key.type, \.type)]
            }
        }
    }
}

extension Telephony1 {
    /// The objects in a `GetManagedObjects` reply: (path, interface → properties). What is not of
    /// that shape is left out.
    public static func managedObjects(in reply: [DBusValue]) -> [(ObjectPath, [String: [String: DBusValue]])] {
        guard case .dictionary(_, _, let objects)? = reply.first else { return [] }
        return objects.compactMap { entry in
            guard case .objectPath(let path) = entry.key, case .dictionary(_, _, let interfaces) = entry.value else { return nil }
            var result: [String: [String: DBusValue]] = [:]
            for interface in interfaces {
                if case .string(let name) = interface.key { result[name] = interface.value.vardict ?? [:] }
            }
            return (path, result)
        }
    }
}
