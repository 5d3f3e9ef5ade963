import DBus

// The desktop's own interfaces that MonkeyCall serves or calls, declared like its own
// (`Telephony1.swift`): GNOME Shell's and KRunner's search providers, served by the daemon
// beside its API, and `org.freedesktop.Application`, through which it asks the Phone app.
// They are not MonkeyCall's to change: each says what its desktop's own XML says (GNOME Shell
// 43's `org.gnome.ShellSearchProvider2.xml`, KRunner 5.103's `kf5_org.kde.krunner1.xml`, the
// Desktop Entry specification's D-Bus activation), and none is in the API's XML.

/// Interfaces of the desktop, served or called by MonkeyCall.
public enum Desktop {
    /// `org.gnome.Shell.SearchProvider2`: GNOME Shell's overview asks each provider for the
    /// results of what the user types, as terms split at white space.
    public enum SearchProvider2 {
        public static let interface = "org.gnome.Shell.SearchProvider2"

        public static let getInitialResultSet = MethodSpec(interface, "GetInitialResultSet", in: Arg("terms", [String].self),
                                                           out: Arg("results", [String].self), doc: """
            the ids of the results for a new search, best first (the shell shows
            at most 5). A newer search from the same connection replaces one
            not answered yet, which answers no results (the shell searches again
            at each key). LimitsExceeded: 16 searches of the caller's process,
            or 256 in all, wait already.
            """, errors: [DBusError.Name.accessDenied, DBusError.Name.invalidArgs, DBusError.Name.limitsExceeded])

        public static let getSubsearchResultSet = MethodSpec(interface, "GetSubsearchResultSet", in: Arg("previous_results", [String].self),
                                                             Arg("terms", [String].self), out: Arg("results", [String].self), doc: """
            the ids of the results for a search refined from an earlier one (the
            user typed more). Replaced, and bounded, as GetInitialResultSet.
            """, errors: [DBusError.Name.accessDenied, DBusError.Name.invalidArgs, DBusError.Name.limitsExceeded])

        public static let getResultMetas = MethodSpec(interface, "GetResultMetas", in: Arg("identifiers", [String].self),
                                                      out: Arg("metas", [[String: DBusValue]].self), doc: """
            one meta per id asked, in order: id s, name s, description s (one
            line), icon v (a serialized GIcon), clipboardText s.
            """, errors: [DBusError.Name.accessDenied, DBusError.Name.invalidArgs])

        public static let activateResult = MethodSpec(interface, "ActivateResult", in: Arg("identifier", String.self), Arg("terms", [String].self),
                                                      Arg("timestamp", UInt32.self), doc: """
            the user chose a result.
            """, errors: [DBusError.Name.accessDenied, DBusError.Name.invalidArgs])

        public static let launchSearch = MethodSpec(interface, "LaunchSearch", in: Arg("terms", [String].self), Arg("timestamp", UInt32.self), doc: """
            the user asked for the provider's app, with the search.
            """, errors: [DBusError.Name.accessDenied, DBusError.Name.invalidArgs])

        public static let spec = InterfaceSpec(interface, doc: """
            org.gnome.Shell.SearchProvider2: GNOME Shell's search provider.
            """, members: [getInitialResultSet, getSubsearchResultSet, getResultMetas, activateResult, launchSearch])
    }

    /// `org.kde.krunner1`: KRunner's D-Bus runners (`X-Plasma-API=DBus2`).
    public enum KRunner1 {
        public static let interface = "org.kde.krunner1"

        /// A match (`(sssida{sv})`): id, text, icon name, type, relevance (0–1) and properties
        /// (`subtext` s, `urls` as, `category` s, `actions` as: the ids of the actions that apply,
        /// [] for none).
        public struct RemoteMatch: DBusRepresentable, Sendable, Equatable {
            /// KRunner's `QueryMatch::Type`.
            public enum Kind: Int32, Sendable {
                case completion = 10, possible = 30, informational = 50, helper = 70, exact = 100
            }
            public var id: String
            public var text: String
            public var iconName: String
            public var type: Int32
            public var relevance: Double
            public var properties: [String: DBusValue]

            public init(id: String, text: String, iconName: String, type: Kind, relevance: Double, properties: [String: DBusValue]) {
                self.init(id: id, text: text, iconName: iconName, type: type.rawValue, relevance: relevance, properties: properties)
            }

            public init(id: String, text: String, iconName: String, type: Int32, relevance: Double, properties: [String: DBusValue]) {
                (self.id, self.text, self.iconName, self.type, self.relevance, self.properties) = (id, text, iconName, type, relevance, properties)
            }

            public static var dbusSignature: Signature { "(sssida{sv})" }
            public var dbusValue: DBusValue {
                .structure([.string(id), .string(text), .string(iconName), .int32(type), .double(relevance), .vardict(properties)])
            }
            public init(dbusValue: DBusValue) throws(DBusError) {
                let (id, text, icon, type, relevance, properties) = try Self.members(
                    of: dbusValue, "match", String.self, String.self, String.self, Int32.self, Double.self, [String: DBusValue].self)
                self.init(id: id, text: text, iconName: icon, type: type, relevance: relevance, properties: properties)
            }
        }

        /// An action (`(sss)`): id, text, icon name.
        public struct RemoteAction: DBusRepresentable, Sendable, Equatable {
            public var id: String
            public var text: String
            public var iconName: String

            public init(id: String, text: String, iconName: String) {
                (self.id, self.text, self.iconName) = (id, text, iconName)
            }

            public static var dbusSignature: Signature { "(sss)" }
            public var dbusValue: DBusValue { .structure([.string(id), .string(text), .string(iconName)]) }
            public init(dbusValue: DBusValue) throws(DBusError) {
                let (id, text, icon) = try Self.members(of: dbusValue, "action", String.self, String.self, String.self)
                self.init(id: id, text: text, iconName: icon)
            }
        }

        /// `Config`'s keys.
        public enum ConfigKey {
            public static let minLetterCount = "MinLetterCount", matchRegex = "MatchRegex", triggerWords = "TriggerWords"
        }
        /// A match's properties' keys.
        public enum PropertyKey {
            public static let subtext = "subtext", urls = "urls", category = "category", actions = "actions"
        }

        public static let teardown = MethodSpec(interface, "Teardown", doc: """
            the match session is over.
            """, errors: [DBusError.Name.accessDenied])

        public static let config = MethodSpec(interface, "Config", out: Arg("config", [String: DBusValue].self), doc: """
            the runner's settings (DBus2): MinLetterCount i, MatchRegex s,
            TriggerWords as.
            """, errors: [DBusError.Name.accessDenied])

        public static let actions = MethodSpec(interface, "Actions", out: Arg("matches", [RemoteAction].self), doc: """
            the actions a match may offer: id, text, icon name.
            """, errors: [DBusError.Name.accessDenied])

        public static let run = MethodSpec(interface, "Run", in: Arg("matchId", String.self), Arg("actionId", String.self), doc: """
            runs a match: its default action when actionId is "".
            """, errors: [DBusError.Name.accessDenied, DBusError.Name.invalidArgs])

        public static let match = MethodSpec(interface, "Match", in: Arg("query", String.self), out: Arg("matches", [RemoteMatch].self), doc: """
            the matches of what the user typed. A newer Match from the same
            connection replaces one not answered yet, which answers no matches.
            LimitsExceeded: 16 searches of the caller's process, or 256 in all,
            wait already.
            """, errors: [DBusError.Name.accessDenied, DBusError.Name.invalidArgs, DBusError.Name.limitsExceeded])

        /// Plasma 6 calls it before `Run`: the token to give the window that opens.
        public static let setActivationToken = MethodSpec(interface, "SetActivationToken", in: Arg("token", String.self), doc: """
            the XDG activation token for the window Run opens (Plasma 6).
            """, errors: [DBusError.Name.accessDenied, DBusError.Name.invalidArgs])

        public static let spec = InterfaceSpec(interface, doc: """
            org.kde.krunner1: KRunner's D-Bus runner, API DBus2.
            """, members: [teardown, config, actions, run, match, setActivationToken])
    }

    /// `org.freedesktop.Application`: a D-Bus-activatable app (the Desktop Entry specification).
    public enum Application {
        public static let interface = "org.freedesktop.Application"

        public static let activate = MethodSpec(interface, "Activate", in: Arg("platform_data", [String: DBusValue].self), doc: """
            brings the app forward.
            """)

        public static let activateAction = MethodSpec(interface, "ActivateAction", in: Arg("action_name", String.self),
                                                      Arg("parameter", [DBusValue].self), Arg("platform_data", [String: DBusValue].self), doc: """
            runs one of the app's actions (`app.NAME`), with its parameter (none, or one).
            """)

        public static let spec = InterfaceSpec(interface, doc: """
            org.freedesktop.Application: a D-Bus-activatable application.
            """, members: [activate, activateAction])

        /// `platform_data`'s keys: an XDG activation token (Wayland), an X11 startup id
        /// (`_TIME` and the event's time lets the window take the focus).
        public static let activationToken = "activation-token"
        public static let desktopStartupID = "desktop-startup-id"
    }

    /// `org.gnome.Shell.Extensions` (GNOME Shell, `/org/gnome/Shell`, on the session bus): how a
    /// user's tool turns an installed extension on for that user, as GNOME's Extensions app does.
    public enum ShellExtensions {
        public static let interface = "org.gnome.Shell.Extensions"
        /// The shell's own name: it serves the interface on the connection that owns it (43 owns
        /// no `org.gnome.Shell.Extensions` name).
        public static let busName = "org.gnome.Shell"
        public static let path: ObjectPath = "/org/gnome/Shell"

        public static let enableExtension = MethodSpec(interface, "EnableExtension", in: Arg("uuid", String.self),
                                                       out: Arg("success", Bool.self), doc: """
            turns the extension on for the user (org.gnome.shell enabled-extensions).
            """)

        public static let getExtensionInfo = MethodSpec(interface, "GetExtensionInfo", in: Arg("uuid", String.self),
                                                        out: Arg("info", [String: DBusValue].self), doc: """
            what the shell knows of the extension: {} when it is not installed; `state` d (1 on,
            2 off, 3 error, 4 out of date, 6 initialized), `error` s.
            """)

        public static let spec = InterfaceSpec(interface, doc: """
            org.gnome.Shell.Extensions: GNOME Shell's extensions.
            """, members: [enableExtension, getExtensionInfo])

        /// MonkeyCall's own: the lock screen's call card and the top bar's call.
        public static let monkeyCall = "monkeycall@monkeycall.org"
        /// `state` of an extension that runs.
        public static let enabled = 1.0
    }

    /// The desktop interfaces the service serves, and where: to host callers only.
    public static let served: [(path: ObjectPath, interface: InterfaceSpec)] = [
        (Telephony1.searchPath, SearchProvider2.spec),
        (Telephony1.runnerPath, KRunner1.spec),
    ]
}

/// MonkeyCall Phone, the desktop's Phone app: D-Bus activatable, single instance.
public enum PhoneApp {
    public static let appID = "org.monkeycall.Phone"
    public static let desktopID = appID + ".desktop"
    public static let objectPath: ObjectPath = "/org/monkeycall/Phone"
    /// Its actions (`org.freedesktop.Application.ActivateAction`).
    public enum Action {
        /// `call(s handle)`: asks the user which app calls it, when that is not clear, and calls.
        public static let call = "call"
        /// `show-call(s call_uuid)`: the call window.
        public static let showCall = "show-call"
        /// `search(s query)`: the Contacts view, searching.
        public static let search = "search"
    }
}
