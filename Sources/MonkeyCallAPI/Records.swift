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
        public static let fields: [RecordField<Self>] = [
            .field(Key.name, \.name, required: true), .field(Key.maximumCallGroups, \.maximumCallGroups),
            .field(Key.maximumCallsPerCallGroup, \.maximumCallsPerCallGroup), .field(Key.supportsVideo, \.supportsVideo),
            .field(Key.supportedHandleTypes, \.supportedHandleTypes), .field(Key.includesCallsInRecents, \.includesCallsInRecents),
            .optional(Key.ringtoneSound, \.ringtoneSound), .optional(Key.iconName, \.iconName), .optional(Key.iconData, \.iconData),
            .field(Key.urlSchemes, \.urlSchemes), .optional(Key.desktopEntry, \.desktopEntry),
        ]
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
        public static let fields: [RecordField<Self>] = [
            .optional(Key.handle, \.handle), .optional(Key.handleType, \.handleType),
            .optional(Key.localizedCallerName, \.localizedCallerName), .optional(Key.supportsHolding, \.supportsHolding),
            .optional(Key.supportsGrouping, \.supportsGrouping), .optional(Key.supportsUngrouping, \.supportsUngrouping),
            .optional(Key.supportsDTMF, \.supportsDTMF), .optional(Key.hasVideo, \.hasVideo),
        ]
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
        public static let fields: [RecordField<Self>] = [
            .field(Key.id, \.id), .field(Key.callUUID, \.callUUID), .field(Key.providerName, \.providerName), .field(Key.appId, \.appID),
            .field(Key.handle, \.handle), .field(Key.handleType, \.handleType), .field(Key.callerName, \.callerName),
            .field(Key.outgoing, \.outgoing), .field(Key.status, \.status), .field(Key.endReason, \.endReason),
            .field(Key.startedAt, \.startedAt), .field(Key.connectedAt, \.connectedAt), .field(Key.endedAt, \.endedAt),
            .field(Key.hasVideo, \.hasVideo), .field(Key.seen, \.seen),
        ]
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
        public static let fields: [RecordField<Self>] = [
            .field(Key.id, \.id), .field(Key.handle, \.handle), .field(Key.handleType, \.handleType),
            .field(Key.name, \.name), .field(Key.providerName, \.providerName),
        ]
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
        public static let fields: [RecordField<Self>] = [
            .field(Key.id, \.id), .field(Key.name, \.name), .field(Key.numbers, \.numbers), .field(Key.isFavorite, \.isFavorite),
        ]
    }

    /// `ReportCallEnded`'s and `FulfillAction`'s info.
    public struct ActionInfo: VarDictRecord, Equatable {
        /// When it happened; 0 or absent: now.
        public var date: UInt64?

        public init() {}

        public static let context = "info"
        public static let fields: [RecordField<Self>] = [.optional(Key.date, \.date)]
    }
}

extension Telephony1 {
    /// An action on the bus, both ways, the one coding of it: as a controller requests it
    /// (`RequestTransaction`'s `(kind, args)`), read by the service and written by MonkeyCallKit, and
    /// as the provider receives it (`PerformAction`'s `kind` and `args`), written by the service and
    /// read by MonkeyCallKit. Its kind is named by the shared vocabulary's `ActionName` only: the
    /// constructors below (`answer(_:)`, `setHeld(_:_:)`…) each say theirs, and `kind` reads the
    /// action back by its name.
    public struct Action: Equatable, Sendable {
        /// What the action does, with the arguments of its kind: `Action.kind`, read from the name
        /// and the arguments.
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

            public static let names = Name.allCases.map(\.rawValue)
        }

        /// The kind's name on the bus.
        public let name: ActionName
        public var callUUID: String
        /// The transaction the action belongs to (`PerformAction` only).
        public var transactionUUID: String?
        /// The arguments of the action's kind (no other key is set).
        private var own: Arguments

        private init(_ name: ActionName, _ callUUID: String, _ own: Arguments = Arguments()) {
            self.name = name
            self.callUUID = callUUID
            self.own = own
        }

        /// `provider`: which provider places it (only in a request; else the service picks).
        public static func start(_ callUUID: String, handle: String, handleType: String, video: Bool, contactIdentifier: String,
                                 provider: ObjectPath? = nil) -> Action {
            var own = Arguments()
            (own.handle, own.handleType, own.video, own.contactIdentifier, own.provider) = (handle, handleType, video, contactIdentifier, provider)
            return Action(.start, callUUID, own)
        }
        public static func answer(_ callUUID: String) -> Action { Action(.answer, callUUID) }
        public static func end(_ callUUID: String) -> Action { Action(.end, callUUID) }
        public static func setHeld(_ callUUID: String, _ onHold: Bool) -> Action {
            var own = Arguments()
            own.onHold = onHold
            return Action(.setHeld, callUUID, own)
        }
        public static func setMuted(_ callUUID: String, _ muted: Bool) -> Action {
            var own = Arguments()
            own.muted = muted
            return Action(.setMuted, callUUID, own)
        }
        /// `other`: the call to group with; "" takes the call out of its group.
        public static func setGroup(_ callUUID: String, with other: String) -> Action {
            var own = Arguments()
            own.groupWith = other
            return Action(.setGroup, callUUID, own)
        }
        /// `type`: `single-tone`, `soft-pause` or `hard-pause`.
        public static func playDTMF(_ callUUID: String, digits: String, type: String) -> Action {
            var own = Arguments()
            (own.digits, own.type) = (digits, type)
            return Action(.playDTMF, callUUID, own)
        }

        /// The action read by its name, with its kind's arguments.
        public var kind: Kind {
            switch name {
            case .start:
                .start(handle: own.handle ?? "", handleType: own.handleType ?? HandleTypes.generic, video: own.video ?? false,
                       contactIdentifier: own.contactIdentifier ?? "", provider: own.provider)
            case .answer: .answer
            case .end: .end
            case .setHeld: .setHeld(own.onHold ?? false)
            case .setMuted: .setMuted(own.muted ?? false)
            case .setGroup: .setGroup(with: own.groupWith ?? "")
            case .playDTMF: .playDTMF(digits: own.digits ?? "", type: own.type ?? DTMFType.singleTone.rawValue)
            }
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
            var own = Arguments()
            switch kindName {
            case .start:
                own.handle = try required(args.handle, Key.handle)
                (own.handleType, own.video) = (args.handleType ?? HandleTypes.generic, args.video ?? false)
                (own.contactIdentifier, own.provider) = (args.contactIdentifier ?? "", args.provider)
            case .answer, .end: break
            case .setHeld: own.onHold = try required(args.onHold, Key.onHold)
            case .setMuted: own.muted = try required(args.muted, Key.muted)
            case .setGroup: own.groupWith = try required(args.groupWith, Key.groupWith)
            case .playDTMF: (own.digits, own.type) = (try required(args.digits, Key.digits), args.type ?? DTMFType.singleTone.rawValue)
            }
            self.init(kindName, try required(args.callUUID, Key.callUUID), own)
            transactionUUID = args.transactionUUID
        }

        /// The action's `args`: its kind's arguments, its call's UUID, and its transaction's when set.
        public var arguments: [String: DBusValue] {
            var args = own
            args.callUUID = callUUID
            args.transactionUUID = transactionUUID
            return args.entries
        }

        /// `RequestTransaction`'s form of the action: `(kind, args)`.
        public var value: ActionValue { ActionValue(kind: name.rawValue, args: arguments) }

        /// The action of a `PerformAction` (`action_uuid`, `kind`, `call_uuid`, `args`; the call is
        /// the one `call_uuid` names) and its UUID; `InvalidArgs` when malformed or of an unknown kind.
        public static func performed(_ arguments: [DBusValue]) throws(DBusError) -> (actionUUID: String, action: Action) {
            let (actionUUID, kind, callUUID, entries) = try Args<String, String, String, [String: DBusValue]>.decode(
                arguments, context: Provider.performAction.name)
            var args = entries
            args[Key.callUUID] = .string(callUUID)
            return (actionUUID, try Action(kind: kind, arguments: args))
        }

        /// Every key any kind of action takes, declared once.
        struct Arguments: VarDictRecord, Equatable {
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
            static let fields: [RecordField<Self>] = [
                .optional(Key.callUUID, \.callUUID), .optional(Key.transactionUUID, \.transactionUUID), .optional(Key.handle, \.handle),
                .optional(Key.handleType, \.handleType), .optional(Key.video, \.video), .optional(Key.contactIdentifier, \.contactIdentifier),
                .optional(Key.provider, \.provider), .optional(Key.onHold, \.onHold), .optional(Key.muted, \.muted),
                .optional(Key.groupWith, \.groupWith), .optional(Key.digits, \.digits), .optional(Key.type, \.type),
            ]
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
