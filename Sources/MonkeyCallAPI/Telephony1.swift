import DBus
import FoundationEssentials

// The MonkeyCall D-Bus API, declared once: every interface, method, signal and
// property with its Swift types and its documentation. The service serves these
// specs, every client calls through them, and dbus/org.monkeycall.Telephony1.xml
// is generated from them (`swift run monkeycall-api-xml`).


/// Every error of the API under its D-Bus name, used by the service and by
/// MonkeyCallKit's `CXError` codes alike. The standard
/// `org.freedesktop.DBus.Error.*` names (InvalidArgs, AccessDenied,
/// LimitsExceeded, NotSupported) are `DBusError.Name`'s.
public enum APIError: String, CaseIterable, Sendable {
    // CallKit's request-transaction errors.
    case emptyTransaction = "org.monkeycall.Telephony1.Error.EmptyTransaction"
    case unknownCallUUID = "org.monkeycall.Telephony1.Error.UnknownCallUUID"
    case callUUIDAlreadyExists = "org.monkeycall.Telephony1.Error.CallUUIDAlreadyExists"
    case invalidAction = "org.monkeycall.Telephony1.Error.InvalidAction"
    case maximumCallGroupsReached = "org.monkeycall.Telephony1.Error.MaximumCallGroupsReached"
    case unknownCallProvider = "org.monkeycall.Telephony1.Error.UnknownCallProvider"
    case unentitled = "org.monkeycall.Telephony1.Error.Unentitled"
    // An incoming call refused, as CallKit's incoming-call errors.
    case filteredByDoNotDisturb = "org.monkeycall.Telephony1.Error.FilteredByDoNotDisturb"
    case filteredByBlockList = "org.monkeycall.Telephony1.Error.FilteredByBlockList"
    // Actions.
    case unknownAction = "org.monkeycall.Telephony1.Error.UnknownAction"
    case actionFailed = "org.monkeycall.Telephony1.Error.ActionFailed"
    case actionTimedOut = "org.monkeycall.Telephony1.Error.ActionTimedOut"
    // Links.
    case invalidURL = "org.monkeycall.Telephony1.Error.InvalidURL"
    case noProvider = "org.monkeycall.Telephony1.Error.NoProvider"
    /// A link cannot be confirmed: there is no notification server to ask the user through.
    case cannotAsk = "org.monkeycall.Telephony1.Error.CannotAsk"
    // Call directories: CallKit's Call Directory errors.
    case entriesOutOfOrder = "org.monkeycall.Telephony1.Error.EntriesOutOfOrder"
    case duplicateEntries = "org.monkeycall.Telephony1.Error.DuplicateEntries"
    case maximumEntriesExceeded = "org.monkeycall.Telephony1.Error.MaximumEntriesExceeded"
    case unexpectedIncrementalRemoval = "org.monkeycall.Telephony1.Error.UnexpectedIncrementalRemoval"
    case currentlyLoading = "org.monkeycall.Telephony1.Error.CurrentlyLoading"
    case corruptDirectory = "org.monkeycall.Telephony1.Error.CorruptDirectory"
    // The user's data.
    case recentsUnavailable = "org.monkeycall.Telephony1.Error.RecentsUnavailable"
    /// A settings change that could not be saved (it is undone).
    case settingsUnavailable = "org.monkeycall.Telephony1.Error.SettingsUnavailable"
    /// A provider's own: CXProvider's calls after `invalidate()`. Never sent by the service.
    case invalidated = "org.monkeycall.Telephony1.Error.Invalidated"

    /// The error with this message, to throw or to send.
    public func callAsFunction(_ message: String) -> DBusError { DBusError(name: rawValue, message: message) }

    /// The API error a D-Bus error is, if any.
    public init?(_ error: DBusError) { self.init(rawValue: error.name) }
}

extension Telephony1 {
    /// The comment at the head of the XML.
    public static let overview = """
        MonkeyCall D-Bus API, version 1: a desktop re-creation of Apple's CallKit.

        Bus: the user's session bus. Well-known name: org.monkeycall.Telephony1.
        Interface prefix: org.monkeycall.Telephony1. Error prefix:
        org.monkeycall.Telephony1.Error. plus the standard
        org.freedesktop.DBus.Error.InvalidArgs, AccessDenied and LimitsExceeded.

        Objects:
          /org/monkeycall/Telephony1 serves Manager, CallController, CallDirectory,
            Recents, Favorites, AddressBook and org.freedesktop.DBus.ObjectManager
            (for providers and calls).
          /org/monkeycall/Telephony1/Search serves org.gnome.Shell.SearchProvider2
            (GNOME Shell's search) and /org/monkeycall/Telephony1/Runner
            org.kde.krunner1 (KRunner), to host callers only; neither is listed by
            the ObjectManager.
          /org/monkeycall/Telephony1/Provider/N serves Provider, one per
            registration; N is never reused while the service runs.
          /org/monkeycall/Telephony1/Provider/N/DirectoryUpdate serves
            CallDirectoryUpdate, only while an update is open.
          /org/monkeycall/Telephony1/Call/HEX (the call UUID as 32 lower-case hex
            digits) serves Call while the call lives; when it ends it first emits
            PropertiesChanged with State \(CallState.ended.quoted) and HasEnded true, then is removed.
        Every object also has Introspectable, Peer and Properties, and emits
        PropertiesChanged on every property change.

        Conventions:
          Call UUIDs are strings in 8-4-4-4-12 form, accepted in any letter case,
          compared case-insensitively and always emitted in lower case.
          Times are t, microseconds since the Unix epoch; 0 in an argument means
          "now". A time from an app is taken only between the call's start and 60 s
          from now; outside that it is org.freedesktop.DBus.Error.InvalidArgs
          naming the argument.
          Strings from apps are bounded in bytes as well as characters: Name at
          most 64 characters and 256 bytes, handles and caller names 1 KiB,
          directory labels 256 bytes; IconData a PNG of at most 256 KiB and
          512x512 pixels (read from its header). Over a bound: InvalidArgs.
          Handle types are \(HandleType.generic.quoted), \(HandleType.phoneNumber.quoted) and \(HandleType.emailAddress.quoted).
          In option dictionaries (a{sv}) unknown keys are ignored; a known key with
          the wrong type is org.freedesktop.DBus.Error.InvalidArgs naming the key.
        """

    /// `org.monkeycall.Telephony1.Manager`.
    public enum Manager {
        public static let interface = "org.monkeycall.Telephony1.Manager"

        public static let registerProvider = MethodSpec(interface, "RegisterProvider", in: Arg("configuration", [String: DBusValue].self), out: Arg("provider", ObjectPath.self), doc: """
            registers the calling app as a provider and returns
            the path of its new Provider object. The provider lives as long as the
            caller's bus connection, or until Provider.Invalidate.
            configuration keys (CallKit defaults):
              Name s: required, 1 to 64 characters and at most 256 bytes of UTF-8,
                shown to the user.
              MaximumCallGroups u: default 2.
              MaximumCallsPerCallGroup u: default 5.
              SupportsVideo b: default false.
              SupportedHandleTypes as: default all three
                (\(HandleType.generic.quoted), \(HandleType.phoneNumber.quoted), \(HandleType.emailAddress.quoted)).
              IncludesCallsInRecents b: default true.
              RingtoneSound s: default "" (a sound file path or an XDG sound name;
                empty means "phone-incoming-call"). A sandboxed app gives a name
                only: letters, digits, "-", "_" and ".".
              IconName s: default none. An XDG icon name; a host app may give a
                path. A sandboxed app gives a name only.
              IconData ay: PNG image, at most 256 KiB and 512x512 pixels (read from
                its header before anything decodes it); default none.
              URLSchemes as: default [] (for example ["monkeycall"]).
              DesktopEntry s: desktop-file id, used for notifications; default none.
            provider: path of the new /org/monkeycall/Telephony1/Provider/N object.
            LimitsExceeded: 32 providers per connection, and per app (a sandboxed
            app; a host process, whatever Names it uses); 60 registrations a
            minute per app, counted by its Name and, for a host app, its process.
            """, errors: [DBusError.Name.invalidArgs, DBusError.Name.limitsExceeded])

        public static let openURL = MethodSpec(interface, "OpenURL", in: Arg("url", String.self), out: Arg("call_uuid", String.self), doc: """
            starts an outgoing call from a link and returns its call UUID.
            url: "monkeycall://HANDLE" or "monkeycall:HANDLE" (any scheme a provider
            declared in URLSchemes), with an optional "?video=1"; the handle is
            percent-decoded. "tel:" numbers become phone-number handles. The call
            goes to the provider that declared the scheme in URLSchemes; for "tel:"
            that is such a provider, else one that supports phone numbers.
            The user is asked first, as iOS does for every tel: link: a notification
            "Call HANDLE with APP?" with actions "call" (Call) and "cancel" (Cancel),
            urgency 2, resident, expiring after 60 s. The reply comes at once; the
            provider gets its start action only after Call; Cancel, dismissal or
            expiry start nothing. Scripts that must not ask use StartCall.
            call_uuid: the UUID the call will have, in lower case.
            CannotAsk: there is no notification server to ask through (the message
            names monkeycall dial, which calls without asking).
            LimitsExceeded: the asking app already has 3 links waiting for the
            user's answer.
            """, errors: [APIError.invalidURL.rawValue, APIError.noProvider.rawValue, APIError.cannotAsk.rawValue, DBusError.Name.limitsExceeded])

        public static let listLinkHandlers = MethodSpec(interface, "ListLinkHandlers", out: Arg("handlers", [String: String].self), doc: """
            which app opens each link scheme (OpenURL): the first app that declared
            the scheme in URLSchemes keeps it, unless the user chose another; a later
            app that declares it does not take it. Not for sandboxed apps.
            handlers: scheme -> app key (a sandboxed app's id, a host app's Name).
            """, errors: [DBusError.Name.accessDenied])

        public static let setLinkHandler = MethodSpec(interface, "SetLinkHandler", in: Arg("scheme", String.self), Arg("app", String.self), doc: """
            makes `app` open the links of `scheme`, for good (saved). Not for
            sandboxed apps.
            scheme: a URL scheme such as "tel"; app: an app key as ListLinkHandlers
            gives it; "" forgets the choice (the next app to declare it claims it).
            """, errors: [DBusError.Name.invalidArgs, DBusError.Name.accessDenied, DBusError.Name.failed])

        public static let subscriptionDropped = SignalSpec(interface, "SubscriptionDropped", Arg("reason", String.self), doc: """
            sent to a subscriber, alone, when its subscription ended because
            it stopped reading: a Peer.Ping it was sent (which libdbus and GDBus
            answer as they read; at its first signal, then every 256, and when
            the subscribers are as many as allowed) went unanswered for 5 s, or
            while 4,096 more signals were due for it. Its backlog stays bounded;
            it may Subscribe again.
            """)

        public static let subscribe = MethodSpec(interface, "Subscribe", doc: """
            starts sending the caller the signals about providers, calls, Recents
            and the user's settings (InterfacesAdded, InterfacesRemoved,
            PropertiesChanged, EntryAdded, and for host apps AddressBook's
            Changed). Nothing is broadcast: each goes
            unicast to the connection that owns the object and to every
            subscriber that may see it (a host app: everything; a sandboxed app:
            its own providers and calls). Like org.freedesktop.systemd1.Manager's
            Subscribe. Ends with Unsubscribe or when the connection leaves the
            bus. A provider hears its own objects' signals without subscribing.
            At most 16 connections of one app (a sandboxed app; a host
            process, whatever names it uses), 32 of host processes together
            and 4,096 in all may be subscribed: LimitsExceeded past any, and
            the subscribers that stop reading are dropped within 5 s (try
            again then). The connections that own org.monkeycall.Phone or
            org.gnome.Shell (the desktop's own observers) always may.
            """, errors: [DBusError.Name.invalidArgs, DBusError.Name.limitsExceeded])

        public static let unsubscribe = MethodSpec(interface, "Unsubscribe", doc: """
            stops the signals Subscribe started.
            """, errors: [DBusError.Name.invalidArgs])

        public static let version = PropertySpec(interface, "Version", String.self, doc: """
            the service's version string.
            """)

        public static let doNotDisturb = PropertySpec(interface, "DoNotDisturb", Bool.self, access: .readwrite, doc: """
            when true, incoming calls are refused with
            org.monkeycall.Telephony1.Error.FilteredByDoNotDisturb, except as
            allowed by DoNotDisturbAllowFavorites, DoNotDisturbAllowContacts and
            DoNotDisturbAllowRepeatedCalls. Persisted. Default false.
            A change that cannot be saved is undone and answers
            org.monkeycall.Telephony1.Error.SettingsUnavailable.
            """)

        public static let doNotDisturbAllowFavorites = PropertySpec(interface, "DoNotDisturbAllowFavorites", Bool.self, access: .readwrite, doc: """
            when true, calls from favorites still ring
            during Do Not Disturb. Persisted. Default true.
            A change that cannot be saved is undone and answers
            org.monkeycall.Telephony1.Error.SettingsUnavailable.
            """)

        public static let doNotDisturbAllowContacts = PropertySpec(interface, "DoNotDisturbAllowContacts", Bool.self, access: .readwrite, doc: """
            when true, calls from contacts in the user's
            address book (GNOME's address books, vCard folders) still ring during
            Do Not Disturb, as iOS's "Allow calls from: All Contacts". Persisted.
            Default false.
            A change that cannot be saved is undone and answers
            org.monkeycall.Telephony1.Error.SettingsUnavailable.
            """)

        public static let doNotDisturbAllowRepeatedCalls = PropertySpec(interface, "DoNotDisturbAllowRepeatedCalls", Bool.self, access: .readwrite, doc: """
            when true, a second call from the same
            handle within 3 minutes rings during Do Not Disturb. Persisted.
            Default true.
            A change that cannot be saved is undone and answers
            org.monkeycall.Telephony1.Error.SettingsUnavailable.
            """)

        public static let silenceUnknownCallers = PropertySpec(interface, "SilenceUnknownCallers", Bool.self, access: .readwrite, doc: """
            when true, callers that are neither favorites, nor
            contacts in the user's address book, nor in recents are silenced: no
            ring, and the call is recorded as missed.
            Persisted. Default false.
            A change that cannot be saved is undone and answers
            org.monkeycall.Telephony1.Error.SettingsUnavailable.
            """)

        public static let doNotDisturbSource = PropertySpec(interface, "DoNotDisturbSource", String.self, doc: """
            whose Do Not Disturb holds incoming calls back now,
            the first that is on of: "monkeycall" (DoNotDisturb above), "gnome"
            (GNOME's Do Not Disturb: org.gnome.desktop.notifications show-banners
            is false), "notification-server" (the Inhibited property of the
            org.freedesktop.Notifications server, KDE Plasma's Do Not Disturb);
            "none" when none is. The desktop's sources hold calls back exactly as
            DoNotDisturb does (FilteredByDoNotDisturb, with the same favorites,
            contacts and repeated-call exceptions, recorded in Recents as filtered), follow
            changes live, and are not followed when the daemon runs with
            the no-desktop-do-not-disturb option. Emits PropertiesChanged.
            """)

        public static let pausesMediaDuringCalls = PropertySpec(interface, "PausesMediaDuringCalls", Bool.self, access: .readwrite, doc: """
            when true, media players on the session bus
            (MPRIS, org.mpris.MediaPlayer2.*) that are playing when a call's audio
            session activates are paused, and resumed when no call holds the audio
            session any more, unless the user started or stopped them meanwhile.
            Persisted. Default true. Reads false, and refuses true with
            org.freedesktop.DBus.Error.NotSupported, when the daemon runs with
            the no-pause-media option.
            A change that cannot be saved is undone and answers
            org.monkeycall.Telephony1.Error.SettingsUnavailable.
            """)

        public static let showsCallControls = PropertySpec(interface, "ShowsCallControls", Bool.self, access: .readwrite, doc: """
            when true, every call that is up (dialing,
            connecting, active, held) has an ongoing-call notification (category
            call.ongoing) with Hang Up, Mute or Unmute, Hold or Resume and Open APP
            buttons, and a call that had connected leaves "Call ended" for 5 s.
            Persisted. Default true. Reads false, and refuses true with
            org.freedesktop.DBus.Error.NotSupported, when the daemon runs with the
            no-call-controls option.
            """)

        public static let playsRingtone = PropertySpec(interface, "PlaysRingtone", Bool.self, access: .readwrite, doc: """
            when true, the service plays the ringtone of the call that rings on
            screen through the session's sound server (media.role phone), looped
            until the call stops ringing, and a short call-waiting tone instead
            while another call is up; the ringing notification then carries
            suppress-sound and a Silence button. When false the notification
            server plays the provider's sound, once if at all. Persisted. Default
            true. Reads false, and refuses true with
            org.freedesktop.DBus.Error.NotSupported, when the daemon runs with the
            no-ringtone option.
            """)

        public static let spec = InterfaceSpec(interface, doc: """
            org.monkeycall.Telephony1.Manager (root object): registers providers
            (VOIP apps), opens call links, and holds the user's Do Not Disturb and
            media settings.
            """, members: [
            registerProvider,
            openURL,
            listLinkHandlers,
            setLinkHandler,
            subscribe,
            unsubscribe,
            subscriptionDropped,
            version,
            doNotDisturb,
            doNotDisturbAllowFavorites,
            doNotDisturbAllowContacts,
            doNotDisturbAllowRepeatedCalls,
            silenceUnknownCallers,
            doNotDisturbSource,
            pausesMediaDuringCalls,
            showsCallControls,
            playsRingtone,
        ])
    }

    /// `org.monkeycall.Telephony1.CallController`.
    public enum CallController {
        public static let interface = "org.monkeycall.Telephony1.CallController"

        /// What a transaction may fail with: `RequestTransaction` and every shortcut to it.
        public static let transactionErrors = [
            APIError.emptyTransaction.rawValue, APIError.unknownCallUUID.rawValue, APIError.callUUIDAlreadyExists.rawValue,
            APIError.invalidAction.rawValue, APIError.maximumCallGroupsReached.rawValue, APIError.unknownCallProvider.rawValue,
            APIError.unentitled.rawValue, DBusError.Name.invalidArgs, DBusError.Name.limitsExceeded,
        ]

        public static let requestTransaction = MethodSpec(interface, "RequestTransaction", in: Arg("actions", [ActionValue].self), out: Arg("transaction_uuid", String.self), doc: """
            validates and dispatches a transaction, and replies
            once it is accepted (as in CallKit, the reply means "accepted", not
            "done"; the outcome comes in TransactionCompleted).
            actions: a list of (kind, args). Kinds and their args keys:
              \(ActionName.start.quoted): CallUUID s (a new UUID), Handle s, HandleType s (default
                \(HandleType.generic.quoted)), Video b (default false), ContactIdentifier s,
                Provider o (default: the caller's own provider when it owns exactly
                one, else the one provider that fits; ambiguous is
                org.monkeycall.Telephony1.Error.UnknownCallProvider).
              \(ActionName.answer.quoted): CallUUID s.
              \(ActionName.end.quoted): CallUUID s.
              \(ActionName.setHeld.quoted): CallUUID s, OnHold b.
              \(ActionName.setMuted.quoted): CallUUID s, Muted b.
              \(ActionName.setGroup.quoted): CallUUID s, GroupWith s ("" means leave the group).
              \(ActionName.playDTMF.quoted): CallUUID s, Digits s, Type s (\(DTMFType.singleTone.quoted),
                \(DTMFType.softPause.quoted) or \(DTMFType.hardPause.quoted)).
            When an \(ActionName.answer.quoted) or \(ActionName.start.quoted) would leave two calls active, the service
            adds actions for the other active calls, of any provider: \(ActionName.setHeld.quoted)
            where the call supports holding, else \(ActionName.end.quoted).
            transaction_uuid: identifies the transaction in TransactionCompleted.
            """, errors: transactionErrors)

        public static let startCall = MethodSpec(interface, "StartCall", in: Arg("handle", String.self), Arg("options", [String: DBusValue].self), out: Arg("call_uuid", String.self), Arg("transaction_uuid", String.self), doc: """
            convenience for a one-action \(ActionName.start.quoted) transaction.
            handle: the remote party's handle.
            options keys:
              HandleType s: default \(HandleType.generic.quoted).
              Video b: default false.
              Provider o: default the caller's own provider when it owns exactly
                one, else the one provider that fits.
              CallUUID s: default a new UUID chosen by the service.
            call_uuid: the new call's UUID; transaction_uuid: as in
            RequestTransaction.
            """, errors: CallController.transactionErrors)

        public static let answerCall = MethodSpec(interface, "AnswerCall", in: Arg("call_uuid", String.self), out: Arg("transaction_uuid", String.self), doc: """
            convenience for a one-action \(ActionName.answer.quoted) transaction on the
            call call_uuid.
            """, errors: CallController.transactionErrors)

        public static let endCall = MethodSpec(interface, "EndCall", in: Arg("call_uuid", String.self), out: Arg("transaction_uuid", String.self), doc: """
            convenience for a one-action \(ActionName.end.quoted) transaction on the call
            call_uuid (declining a ringing call is an end).
            """, errors: CallController.transactionErrors)

        public static let setHeld = MethodSpec(interface, "SetHeld", in: Arg("call_uuid", String.self), Arg("on_hold", Bool.self), out: Arg("transaction_uuid", String.self), doc: """
            convenience for a one-action \(ActionName.setHeld.quoted) transaction.
            on_hold: true to hold the call, false to resume it.
            """, errors: CallController.transactionErrors)

        public static let setMuted = MethodSpec(interface, "SetMuted", in: Arg("call_uuid", String.self), Arg("muted", Bool.self), out: Arg("transaction_uuid", String.self), doc: """
            convenience for a one-action \(ActionName.setMuted.quoted) transaction.
            muted: true to mute the call, false to unmute it.
            """, errors: CallController.transactionErrors)

        public static let setGroup = MethodSpec(interface, "SetGroup", in: Arg("call_uuid", String.self), Arg("group_with", String.self), out: Arg("transaction_uuid", String.self), doc: """
            convenience for a one-action \(ActionName.setGroup.quoted) transaction.
            group_with: UUID of the call to group with; "" means leave the group.
            """, errors: CallController.transactionErrors)

        public static let playDTMF = MethodSpec(interface, "PlayDTMF", in: Arg("call_uuid", String.self), Arg("digits", String.self), Arg("type", String.self), out: Arg("transaction_uuid", String.self), doc: """
            convenience for a one-action \(ActionName.playDTMF.quoted) transaction.
            digits: the digits to play; type: \(DTMFType.singleTone.quoted), \(DTMFType.softPause.quoted) or
            \(DTMFType.hardPause.quoted).
            """, errors: CallController.transactionErrors)

        public static let transactionCompleted = SignalSpec(interface, "TransactionCompleted", Arg("transaction_uuid", String.self), Arg("success", Bool.self), Arg("error_name", String.self), Arg("error_message", String.self), doc: """
            sent to the requester only, when every action of
            the transaction is fulfilled, or on the first failure.
            transaction_uuid: as returned by the request; success: true when every
            action was fulfilled; error_name and error_message: "" on success, else
            org.monkeycall.Telephony1.Error.ActionFailed or
            org.monkeycall.Telephony1.Error.ActionTimedOut and a message.
            """)

        public static let spec = InterfaceSpec(interface, doc: """
            org.monkeycall.Telephony1.CallController (root object): the user's own
            actions (start, answer, end, hold, mute, group, DTMF) arrive here as
            transactions of actions. The service validates a transaction, then hands
            each action to the provider that owns the call (Provider.PerformAction),
            which fulfils or fails it.
            A handle to call (Handle, StartCall's handle, from any caller) holding a
            control character (C0, DEL, C1, U+2028, U+2029) or a bidirectional
            formatting character (U+202A-U+202E, U+2066-U+2069, U+200E, U+200F,
            U+061C) is org.freedesktop.DBus.Error.InvalidArgs naming the character.
            """, members: [
            requestTransaction,
            startCall,
            answerCall,
            endCall,
            setHeld,
            setMuted,
            setGroup,
            playDTMF,
            transactionCompleted,
        ])
    }

    /// `org.monkeycall.Telephony1.Provider`.
    public enum Provider {
        public static let interface = "org.monkeycall.Telephony1.Provider"

        public static let reportNewIncomingCall = MethodSpec(interface, "ReportNewIncomingCall", in: Arg("call_uuid", UUID.self), Arg("update", TelephonyVocabulary.CallUpdate.self), out: Arg("call", ObjectPath.self), doc: """
            reports a new incoming call. On success the call
            rings: a desktop notification appears and the call object is published.
            At most 3 ringing calls have a notification each (each app's oldest
            first, in turn); one more notification counts the others, which still
            ring and can be answered.
            call_uuid: the new call's UUID; update: initial call details (keys as
            above; absent keys take their defaults).
            call: path of the new /org/monkeycall/Telephony1/Call/HEX object.
            """, errors: [APIError.callUUIDAlreadyExists.rawValue, APIError.filteredByDoNotDisturb.rawValue, APIError.filteredByBlockList.rawValue, DBusError.Name.invalidArgs, DBusError.Name.accessDenied, DBusError.Name.limitsExceeded])

        public static let reportCallUpdated = MethodSpec(interface, "ReportCallUpdated", in: Arg("call_uuid", UUID.self), Arg("update", TelephonyVocabulary.CallUpdate.self), doc: """
            updates a call's details. The update is partial:
            absent keys stay as they are (keys as above).
            """, errors: [APIError.unknownCallUUID.rawValue, DBusError.Name.invalidArgs, DBusError.Name.accessDenied])

        public static let reportCallEnded = MethodSpec(interface, "ReportCallEnded", in: Arg("call_uuid", UUID.self), Arg("reason", String.self), Arg("ended_at", UInt64.self), doc: """
            reports that a call ended for a reason the user did
            not cause here.
            reason: \(EndReason.failed.quoted), \(EndReason.remoteEnded.quoted), \(EndReason.unanswered.quoted), \(EndReason.answeredElsewhere.quoted) or
            \(EndReason.declinedElsewhere.quoted). ended_at: when it ended (0 means now), between the
            call's start and 60 s from now.
            """, errors: [APIError.unknownCallUUID.rawValue, DBusError.Name.invalidArgs, DBusError.Name.accessDenied])

        public static let reportOutgoingCallStartedConnecting = MethodSpec(interface, "ReportOutgoingCallStartedConnecting", in: Arg("call_uuid", UUID.self), Arg("at", UInt64.self), doc: """
            reports that an outgoing call
            started connecting at the time at (0 means now), between the call's
            start and 60 s from now.
            """, errors: [APIError.unknownCallUUID.rawValue, DBusError.Name.invalidArgs, DBusError.Name.accessDenied])

        public static let reportOutgoingCallConnected = MethodSpec(interface, "ReportOutgoingCallConnected", in: Arg("call_uuid", UUID.self), Arg("at", UInt64.self), doc: """
            reports that an outgoing call connected at
            the time at (0 means now), between the call's start and 60 s from now.
            """, errors: [APIError.unknownCallUUID.rawValue, DBusError.Name.invalidArgs, DBusError.Name.accessDenied])

        public static let fulfillAction = MethodSpec(interface, "FulfillAction", in: Arg("action_uuid", UUID.self), Arg("info", [String: DBusValue].self), doc: """
            reports that the provider performed the action
            action_uuid (from PerformAction) successfully.
            info keys: Date t (when it was performed; default 0, meaning now; between
            the call's start and 60 s from now).
            """, errors: [APIError.unknownAction.rawValue, DBusError.Name.invalidArgs, DBusError.Name.accessDenied])

        public static let failAction = MethodSpec(interface, "FailAction", in: Arg("action_uuid", UUID.self), Arg("info", [String: DBusValue].self), doc: """
            reports that the provider could not perform the action
            action_uuid (from PerformAction); the transaction fails with
            org.monkeycall.Telephony1.Error.ActionFailed.
            info keys: Date t (when it failed; default 0, meaning now).
            """, errors: [APIError.unknownAction.rawValue, DBusError.Name.invalidArgs, DBusError.Name.accessDenied])

        public static let invalidate = MethodSpec(interface, "Invalidate", doc: """
            ends all the provider's calls as \(EndReason.failed.quoted) and removes the
            provider.
            """, errors: [DBusError.Name.accessDenied])

        public static let beginCallDirectoryUpdate = MethodSpec(interface, "BeginCallDirectoryUpdate", in: Arg("incremental", Bool.self), out: Arg("update", ObjectPath.self), doc: """
            opens a call directory update and returns the
            path of its CallDirectoryUpdate object
            (/org/monkeycall/Telephony1/Provider/N/DirectoryUpdate).
            incremental: false replaces the whole directory; true applies additions
            and removals since the last successful update.
            """, errors: [APIError.currentlyLoading.rawValue, DBusError.Name.accessDenied])

        public static let didBegin = SignalSpec(interface, "DidBegin", doc: """
            the provider is ready. Sent to the owner only.
            """)

        public static let performAction = SignalSpec(interface, "PerformAction", Arg("action_uuid", String.self), Arg("kind", String.self), Arg("call_uuid", String.self), Arg("args", [String: DBusValue].self), doc: """
            asks the provider to perform an action; it must answer
            with FulfillAction or FailAction within the action timeout. Sent to the
            owner only.
            action_uuid: identifies this action; kind and args: as in
            CallController.RequestTransaction (\(ActionName.start.quoted), \(ActionName.answer.quoted), \(ActionName.end.quoted),
            \(ActionName.setHeld.quoted), \(ActionName.setMuted.quoted), \(ActionName.setGroup.quoted), \(ActionName.playDTMF.quoted)), with args also
            carrying TransactionUUID s; call_uuid: the call acted on.
            """)

        public static let timedOutPerformingAction = SignalSpec(interface, "TimedOutPerformingAction", Arg("action_uuid", String.self), Arg("kind", String.self), Arg("call_uuid", String.self), doc: """
            the action action_uuid (of kind kind, on the
            call call_uuid) was neither fulfilled nor failed in time and has failed;
            it must not be fulfilled afterwards. Sent to the owner only.
            """)

        public static let didReset = SignalSpec(interface, "DidReset", doc: """
            the provider must drop all call state; treat it as "every
            call ended". Sent to the owner only.
            """)

        public static let didActivateAudioSession = SignalSpec(interface, "DidActivateAudioSession", doc: """
            the call's audio session is active (the call
            started or was answered); start media only after this. Sent to the
            owner only.
            """)

        public static let didDeactivateAudioSession = SignalSpec(interface, "DidDeactivateAudioSession", doc: """
            the call's audio session is no longer active
            (the call ended). Sent to the owner only.
            """)

        public static let didRequestShowApp = SignalSpec(interface, "DidRequestShowApp", Arg("call_uuid", String.self), doc: """
            the user pressed the app's button on the
            call's notification (CallKit's in-call app button): show that call. The
            service has also activated the app through its DesktopEntry. Sent to
            the owner only.
            """)

        public static let name = PropertySpec(interface, "Name", String.self, doc: """
            the provider's Name from its configuration.
            """)

        public static let owner = PropertySpec(interface, "Owner", String.self, doc: """
            the unique bus name of the connection that registered it.
            """)

        public static let appId = PropertySpec(interface, "AppId", String.self, doc: """
            the app behind that connection, as the service identified it: the
            Flatpak app id, snap.NAME for a Snap, or "" for a host (unsandboxed) app.
            """)

        public static let configuration = PropertySpec(interface, "Configuration", [String: DBusValue].self, doc: """
            the provider's configuration, with defaults filled in
            (keys as in Manager.RegisterProvider), but for IconData: that is
            the IconData property.
            """)

        public static let iconData = PropertySpec(interface, "IconData", [UInt8].self, changeSignal: .invalidates, doc: """
            the PNG the app gave as IconData (empty: none). Up to 256 KiB,
            so it is never copied into signals: InterfacesAdded leaves it
            out, a change only invalidates it. Read it with Get.
            """)

        public static let calls = PropertySpec(interface, "Calls", [ObjectPath].self, doc: """
            paths of the provider's live Call objects.
            """)

        public static let spec = InterfaceSpec(interface, doc: """
            org.monkeycall.Telephony1.Provider (/org/monkeycall/Telephony1/Provider/N):
            one registered provider (VOIP app). Only the connection that registered
            the provider may call its methods; any other caller gets
            org.freedesktop.DBus.Error.AccessDenied. Its signals are sent to the owner
            only.
            Update dictionaries (a{sv} update) take these keys:
              Handle s, HandleType s, LocalizedCallerName s,
              SupportsHolding b (default true), SupportsGrouping b (default false),
              SupportsUngrouping b (default false), SupportsDTMF b (default true),
              HasVideo b (default false).
            A reported Handle is cleaned, not refused (the call exists): control
            characters become spaces, bidirectional formatting characters are
            dropped, and the call, Recents and a call back carry the result.
            Timing: an action not fulfilled or failed within the action timeout
            (default 10 s, a daemon option) fails, and the provider gets
            TimedOutPerformingAction. An incoming call not answered within the ring
            timeout (default 45 s, a daemon option) gets an \(ActionName.end.quoted) action and ends as
            \(EndReason.unanswered.quoted) (a missed call). When the provider's connection vanishes,
            its calls end as \(RecentStatus.failed.quoted).
            """, members: [
            reportNewIncomingCall,
            reportCallUpdated,
            reportCallEnded,
            reportOutgoingCallStartedConnecting,
            reportOutgoingCallConnected,
            fulfillAction,
            failAction,
            invalidate,
            beginCallDirectoryUpdate,
            didBegin,
            performAction,
            timedOutPerformingAction,
            didReset,
            didActivateAudioSession,
            didDeactivateAudioSession,
            didRequestShowApp,
            name,
            owner,
            appId,
            configuration,
            iconData,
            calls,
        ])
    }

    /// `org.monkeycall.Telephony1.Call`.
    public enum Call {
        public static let interface = "org.monkeycall.Telephony1.Call"

        public static let answer = MethodSpec(interface, "Answer", doc: """
            answers the call (a shortcut for CallController.AnswerCall).
            """, errors: CallController.transactionErrors + [DBusError.Name.accessDenied])

        public static let end = MethodSpec(interface, "End", doc: """
            ends or declines the call (a shortcut for CallController.EndCall).
            """, errors: CallController.transactionErrors + [DBusError.Name.accessDenied])

        public static let setHeld = MethodSpec(interface, "SetHeld", in: Arg("on_hold", Bool.self), doc: """
            holds (on_hold true) or resumes (false) the call (a shortcut
            for CallController.SetHeld).
            """, errors: CallController.transactionErrors + [DBusError.Name.accessDenied])

        public static let setMuted = MethodSpec(interface, "SetMuted", in: Arg("muted", Bool.self), doc: """
            mutes (muted true) or unmutes (false) the call (a shortcut
            for CallController.SetMuted).
            """, errors: CallController.transactionErrors + [DBusError.Name.accessDenied])

        public static let playDTMF = MethodSpec(interface, "PlayDTMF", in: Arg("digits", String.self), doc: """
            plays digits on the call as single tones (a shortcut for
            CallController.PlayDTMF with type \(DTMFType.singleTone.quoted)).
            """, errors: CallController.transactionErrors + [DBusError.Name.accessDenied])

        public static let silence = MethodSpec(interface, "Silence", doc: """
            stops this call's ringtone; the call keeps ringing on screen and
            in its app (iOS: a press of the side button). Host callers and the
            call's own app. InvalidAction when it is not ringing.
            """, errors: [APIError.invalidAction.rawValue, DBusError.Name.accessDenied])

        // The properties: a call's published fields, declared once in `CallRecord.fields`. Each is
        // also here, typed as on the wire, for clients to name (`Telephony1.Call.state.name`).
        public static let uuid: PropertySpec<String> = CallRecord.property(\.uuid)
        public static let provider: PropertySpec<ObjectPath> = CallRecord.property(\.provider)
        public static let providerName: PropertySpec<String> = CallRecord.property(\.providerName)
        public static let handle: PropertySpec<String> = CallRecord.property(\.handle)
        public static let handleType: PropertySpec<String> = CallRecord.property(\.handleType)
        public static let callerName: PropertySpec<String> = CallRecord.property(\.callerName)
        public static let outgoing: PropertySpec<Bool> = CallRecord.property(\.outgoing)
        public static let state: PropertySpec<String> = CallRecord.property(\.state)
        public static let onHold: PropertySpec<Bool> = CallRecord.property(\.onHold)
        public static let muted: PropertySpec<Bool> = CallRecord.property(\.muted)
        public static let silenced: PropertySpec<Bool> = CallRecord.property(\.silenced)
        public static let hasConnected: PropertySpec<Bool> = CallRecord.property(\.hasConnected)
        public static let hasEnded: PropertySpec<Bool> = CallRecord.property(\.hasEnded)
        public static let hasVideo: PropertySpec<Bool> = CallRecord.property(\.hasVideo)
        public static let group: PropertySpec<String> = CallRecord.property(\.group)
        public static let supportsHolding: PropertySpec<Bool> = CallRecord.property(\.supportsHolding)
        public static let supportsGrouping: PropertySpec<Bool> = CallRecord.property(\.supportsGrouping)
        public static let supportsUngrouping: PropertySpec<Bool> = CallRecord.property(\.supportsUngrouping)
        public static let supportsDTMF: PropertySpec<Bool> = CallRecord.property(\.supportsDTMF)
        public static let startedAt: PropertySpec<UInt64> = CallRecord.property(\.startedAt)
        public static let connectedAt: PropertySpec<UInt64> = CallRecord.property(\.connectedAt)
        public static let endedAt: PropertySpec<UInt64> = CallRecord.property(\.endedAt)

        public static let spec = InterfaceSpec(interface, doc: """
            org.monkeycall.Telephony1.Call (/org/monkeycall/Telephony1/Call/HEX):
            one live call. When it ends it first emits PropertiesChanged with State
            \(CallState.ended.quoted) and HasEnded true, then the object is removed.
            """, members: [answer, end, setHeld, setMuted, playDTMF, silence] as [any MemberSpec] + CallRecord.fields.map(\.property))
    }

    /// `org.monkeycall.Telephony1.CallDirectoryUpdate`.
    public enum CallDirectoryUpdate {
        public static let interface = "org.monkeycall.Telephony1.CallDirectoryUpdate"

        public static let addBlockingEntries = MethodSpec(interface, "AddBlockingEntries", in: Arg("numbers", [Int64].self), doc: """
            adds numbers to block, at most 262,144 a call (as every array
            argument; InvalidArgs past it). An open update holds at most
            128 MiB, additions and removals together (8 bytes a number, 10
            and its label for an identification entry; removing an addition
            frees nothing); one app's open updates (a sandboxed app; a host
            process, whatever Names it uses) hold 128 MiB together, and all
            apps' 256 MiB (MaximumEntriesExceeded past any of them: complete
            it and continue in an incremental update).
            """, errors: [APIError.entriesOutOfOrder.rawValue, APIError.duplicateEntries.rawValue, APIError.maximumEntriesExceeded.rawValue, DBusError.Name.invalidArgs, DBusError.Name.accessDenied],
            maximumArgumentBytes: Telephony1.maximumDirectoryBatchBytes)

        public static let addIdentificationEntries = MethodSpec(interface, "AddIdentificationEntries", in: Arg("numbers", [Int64].self), Arg("labels", [String].self), doc: """
            adds numbers with the caller labels to show
            for them; numbers and labels have the same length, labels[i] naming
            numbers[i]. A label is at most 256 bytes of UTF-8; an open update
            holds at most 64 MiB of labels (MaximumEntriesExceeded past it:
            complete it and add the rest in an incremental update).
            """, errors: [APIError.entriesOutOfOrder.rawValue, APIError.duplicateEntries.rawValue, APIError.maximumEntriesExceeded.rawValue, DBusError.Name.invalidArgs, DBusError.Name.accessDenied],
            maximumArgumentBytes: Telephony1.maximumDirectoryBatchBytes)

        public static let removeBlockingEntries = MethodSpec(interface, "RemoveBlockingEntries", in: Arg("numbers", [Int64].self), doc: """
            removes blocked numbers (incremental updates
            only).
            """, errors: [APIError.unexpectedIncrementalRemoval.rawValue, APIError.entriesOutOfOrder.rawValue, APIError.duplicateEntries.rawValue, DBusError.Name.invalidArgs, DBusError.Name.accessDenied],
            maximumArgumentBytes: Telephony1.maximumDirectoryBatchBytes)

        public static let removeAllBlockingEntries = MethodSpec(interface, "RemoveAllBlockingEntries", doc: """
            removes every blocked number (incremental
            updates only).
            """, errors: [APIError.unexpectedIncrementalRemoval.rawValue, DBusError.Name.accessDenied])

        public static let removeIdentificationEntries = MethodSpec(interface, "RemoveIdentificationEntries", in: Arg("numbers", [Int64].self), doc: """
            removes identification entries by number
            (incremental updates only).
            """, errors: [APIError.unexpectedIncrementalRemoval.rawValue, APIError.entriesOutOfOrder.rawValue, APIError.duplicateEntries.rawValue, DBusError.Name.invalidArgs, DBusError.Name.accessDenied],
            maximumArgumentBytes: Telephony1.maximumDirectoryBatchBytes)

        public static let removeAllIdentificationEntries = MethodSpec(interface, "RemoveAllIdentificationEntries", doc: """
            removes every identification entry
            (incremental updates only).
            """, errors: [APIError.unexpectedIncrementalRemoval.rawValue, DBusError.Name.accessDenied])

        public static let complete = MethodSpec(interface, "Complete", doc: """
            applies the whole update atomically, persists it and closes
            the update; on error nothing changes.
            """, errors: [APIError.entriesOutOfOrder.rawValue, APIError.duplicateEntries.rawValue, APIError.maximumEntriesExceeded.rawValue, APIError.unexpectedIncrementalRemoval.rawValue, DBusError.Name.invalidArgs, DBusError.Name.accessDenied])

        public static let cancel = MethodSpec(interface, "Cancel", doc: """
            discards the update and closes it; nothing changes.
            """, errors: [DBusError.Name.accessDenied])

        public static let spec = InterfaceSpec(interface, doc: """
            org.monkeycall.Telephony1.CallDirectoryUpdate
            (/org/monkeycall/Telephony1/Provider/N/DirectoryUpdate): an open call
            directory update (CallKit's Call Directory extension), present only while
            the update is open. Owner only: any other caller gets
            org.freedesktop.DBus.Error.AccessDenied.
            Phone numbers are x: country code and digits, for example 14085555555,
            in 1 to 2^63-2. Each kind of entry (blocking, identification) must be
            strictly ascending across the whole update.
            """, members: [
            addBlockingEntries,
            addIdentificationEntries,
            removeBlockingEntries,
            removeAllBlockingEntries,
            removeIdentificationEntries,
            removeAllIdentificationEntries,
            complete,
            cancel,
        ])
    }

    /// `org.monkeycall.Telephony1.CallDirectory`.
    public enum CallDirectory {
        public static let interface = "org.monkeycall.Telephony1.CallDirectory"

        public static let blockHandle = MethodSpec(interface, "BlockHandle", in: Arg("pattern", String.self), doc: """
            adds pattern to the user's block list; incoming calls
            matching it are refused with
            org.monkeycall.Telephony1.Error.FilteredByBlockList.
            pattern: a handle, or a phone-number prefix ending in "*" (for example
            "+44*"). A change that cannot be saved is undone and answers
            org.monkeycall.Telephony1.Error.SettingsUnavailable.
            """, errors: [DBusError.Name.accessDenied, DBusError.Name.invalidArgs, APIError.settingsUnavailable.rawValue])

        public static let unblockHandle = MethodSpec(interface, "UnblockHandle", in: Arg("pattern", String.self), doc: """
            removes pattern (as given to BlockHandle) from the
            user's block list. A change that cannot be saved is undone and
            answers org.monkeycall.Telephony1.Error.SettingsUnavailable.
            """, errors: [DBusError.Name.accessDenied, DBusError.Name.invalidArgs, APIError.settingsUnavailable.rawValue])

        public static let identify = MethodSpec(interface, "Identify", in: Arg("handle", String.self), out: Arg("label", String.self), Arg("blocked", Bool.self), doc: """
            looks up a handle as a call from it would be named
            and screened. Phone handles are normalised (for example
            "+1 (408) 555-5555" becomes 14085555555).
            label: the caller's name (a favorite, else a contact in the user's
            address book, else an enabled call directory's label), or "" when
            none; blocked: whether a call from the handle would be blocked.
            """, errors: [DBusError.Name.accessDenied, DBusError.Name.invalidArgs])

        public static let listDirectories = MethodSpec(interface, "ListDirectories", out: Arg("directories", [DirectorySummary].self), doc: """
            lists the apps' call directories, each as (app key:
            a sandboxed app's id or a host app's provider Name; enabled, blocking
            entry count, identification entry count). A new app's directory is
            disabled until the user enables it. Not for sandboxed apps.
            """, errors: [DBusError.Name.accessDenied, DBusError.Name.failed])

        public static let setDirectoryEnabled = MethodSpec(interface, "SetDirectoryEnabled", in: Arg("provider_name", String.self), Arg("enabled", Bool.self), doc: """
            enables or disables the call directory of the app
            provider_name (its app key, as ListDirectories gives it). Not for
            sandboxed apps.
            """, errors: [DBusError.Name.accessDenied, DBusError.Name.invalidArgs])

        public static let removeDirectory = MethodSpec(interface, "RemoveDirectory", in: Arg("provider_name", String.self), doc: """
            deletes the call directory of the provider named
            provider_name, with its enabled flag; the provider may give a new one
            with BeginCallDirectoryUpdate. InvalidArgs when there is none,
            org.monkeycall.Telephony1.Error.CurrentlyLoading while an update of it
            is open or being applied.
            """, errors: [DBusError.Name.accessDenied, DBusError.Name.invalidArgs, APIError.currentlyLoading.rawValue, DBusError.Name.failed])

        public static let blockedHandles = PropertySpec(interface, "BlockedHandles", [String].self, doc: """
            the user's block list patterns.
            """)

        public static let spec = InterfaceSpec(interface, doc: """
            org.monkeycall.Telephony1.CallDirectory (root object): the user's own
            block list and the providers' call directories. Directories are keyed by
            provider Name and survive restarts of the service and of the provider.
            """, members: [
            blockHandle,
            unblockHandle,
            identify,
            listDirectories,
            setDirectoryEnabled,
            removeDirectory,
            blockedHandles,
        ])
    }

    /// `org.monkeycall.Telephony1.Recents`.
    public enum Recents {
        public static let interface = "org.monkeycall.Telephony1.Recents"

        public static let list = MethodSpec(interface, "List", in: Arg("limit", UInt32.self), Arg("offset", UInt32.self), out: Arg("entries", [[String: DBusValue]].self), doc: """
            returns a page of entries, newest first.
            limit: the most entries to return; offset: how many newest entries to
            skip.
            entries: each with keys Id t, CallUUID s, ProviderName s, Handle s,
            HandleType s, CallerName s, Outgoing b, Status s (\(RecentStatus.answered.quoted), \(RecentStatus.missed.quoted),
            \(RecentStatus.declined.quoted), \(RecentStatus.blocked.quoted), \(RecentStatus.filtered.quoted), \(RecentStatus.failed.quoted) or \(RecentStatus.cancelled.quoted)),
            EndReason s, StartedAt t, ConnectedAt t, EndedAt t, HasVideo b, Seen b.
            """, errors: [DBusError.Name.accessDenied, APIError.recentsUnavailable.rawValue, DBusError.Name.invalidArgs])

        public static let delete = MethodSpec(interface, "Delete", in: Arg("id", UInt64.self), doc: """
            deletes the entry with this id.
            """, errors: [DBusError.Name.accessDenied, APIError.recentsUnavailable.rawValue, DBusError.Name.invalidArgs])

        public static let clear = MethodSpec(interface, "Clear", doc: """
            deletes every entry.
            """, errors: [DBusError.Name.accessDenied, APIError.recentsUnavailable.rawValue])

        public static let markAllSeen = MethodSpec(interface, "MarkAllSeen", doc: """
            marks every entry as seen, so MissedCount becomes 0.
            """, errors: [DBusError.Name.accessDenied, APIError.recentsUnavailable.rawValue])

        public static let callBack = MethodSpec(interface, "CallBack", in: Arg("id", UInt64.self), out: Arg("call_uuid", String.self), doc: """
            starts an outgoing call to the handle of the entry with this
            id, through the same provider, and returns the new call's UUID.
            """, errors: [DBusError.Name.accessDenied, APIError.recentsUnavailable.rawValue, DBusError.Name.invalidArgs, APIError.noProvider.rawValue])

        public static let missedCount = PropertySpec(interface, "MissedCount", UInt32.self, doc: """
            the number of missed calls not yet seen.
            """)

        public static let entryAdded = SignalSpec(interface, "EntryAdded", Arg("entry", [String: DBusValue].self), doc: """
            a call was recorded; entry has the keys of a List entry.
            """)

        public static let spec = InterfaceSpec(interface, doc: """
            org.monkeycall.Telephony1.Recents (root object): the call history. A call
            is recorded when it ends, unless its provider set IncludesCallsInRecents
            false.
            """, members: [
            list,
            delete,
            clear,
            markAllSeen,
            callBack,
            missedCount,
            entryAdded,
        ])
    }

    /// `org.monkeycall.Telephony1.Favorites`.
    public enum Favorites {
        public static let interface = "org.monkeycall.Telephony1.Favorites"

        public static let add = MethodSpec(interface, "Add", in: Arg("handle", String.self), Arg("handle_type", String.self), Arg("name", String.self), Arg("provider_name", String.self), out: Arg("id", UInt64.self), doc: """
            adds a favorite and returns its id.
            handle: the contact's handle; handle_type: \(HandleType.generic.quoted), \(HandleType.phoneNumber.quoted) or
            \(HandleType.emailAddress.quoted); name: the name to show; provider_name: Name of the
            provider to call through.
            """, errors: [DBusError.Name.accessDenied, APIError.recentsUnavailable.rawValue, DBusError.Name.invalidArgs])

        public static let remove = MethodSpec(interface, "Remove", in: Arg("id", UInt64.self), doc: """
            removes the favorite with this id.
            """, errors: [DBusError.Name.accessDenied, APIError.recentsUnavailable.rawValue, DBusError.Name.invalidArgs])

        public static let list = MethodSpec(interface, "List", out: Arg("favorites", [[String: DBusValue]].self), doc: """
            returns every favorite, each with keys Id t, Handle s,
            HandleType s, Name s, ProviderName s.
            """, errors: [DBusError.Name.accessDenied, APIError.recentsUnavailable.rawValue, DBusError.Name.invalidArgs])

        public static let call = MethodSpec(interface, "Call", in: Arg("id", UInt64.self), out: Arg("call_uuid", String.self), doc: """
            starts an outgoing call to the favorite with this id, through its
            provider, and returns the new call's UUID.
            """, errors: [DBusError.Name.accessDenied, APIError.recentsUnavailable.rawValue, DBusError.Name.invalidArgs, APIError.noProvider.rawValue])

        public static let spec = InterfaceSpec(interface, doc: """
            org.monkeycall.Telephony1.Favorites (root object): the user's favorite
            contacts. Favorites still ring during Do Not Disturb when
            DoNotDisturbAllowFavorites is true, and name callers when the provider
            gives no name.
            """, members: [
            add,
            remove,
            list,
            call,
        ])
    }

    /// `org.monkeycall.Telephony1.AddressBook`.
    public enum AddressBook {
        public static let interface = "org.monkeycall.Telephony1.AddressBook"

        /// `Search`'s `limit` when it is 0, and the most it may be.
        public static let defaultLimit: UInt32 = 50
        public static let maximumLimit: UInt32 = 1_000
        /// The longest `query` in bytes of UTF-8: longer than any name or number.
        public static let maximumQueryBytes = 1_024

        public static let search = MethodSpec(interface, "Search", in: Arg("query", String.self), Arg("limit", UInt32.self),
                                              out: Arg("contacts", [[String: DBusValue]].self), doc: """
            the contacts of the user's address books whose name or number
            matches query, best first. Not for sandboxed apps.
            query: words, each the start of a word of the name, in any letter case
            and with or without accents ("ada love", "zoe" for "Zoë"); or a number
            in any format, national or international ("020 7946", "+44 20 7946",
            "7946 0001"); "" lists every contact by name. At most 1,024 bytes.
            limit: the most contacts to return; 0 means 50; at most 1,000.
            contacts: each with keys Id s (stable while the contact exists),
            Name s, Numbers a(ss) (each a label, "mobile", "home", "work", "main",
            "fax", "pager", "car", "other" or "", and the number as written),
            IsFavorite b (one of its numbers is a favorite).
            InvalidArgs: a query over 1,024 bytes, a limit over 1,000.
            Searches wait their turn with other processes' (the system search's
            too); LimitsExceeded: 16 of the caller's process, or 256 in all,
            wait already.
            """, errors: [DBusError.Name.accessDenied, DBusError.Name.invalidArgs, DBusError.Name.limitsExceeded])

        public static let count = PropertySpec(interface, "Count", UInt32.self, doc: """
            how many contacts with a number the service knows.
            """)

        public static let changed = SignalSpec(interface, "Changed", doc: """
            contacts were added, edited or removed, or the favorites changed:
            what Search answers may differ. Sent to subscribers (Manager.Subscribe)
            that are host apps only; several changes within a moment are one signal.
            """)

        public static let spec = InterfaceSpec(interface, doc: """
            org.monkeycall.Telephony1.AddressBook (root object): the people the
            service knows from the user's address books (GNOME's, and vCard
            folders), served from its index in memory, for the Phone app and other
            host tools. Nothing here is stored by the service. Not for sandboxed
            apps: every member answers them org.freedesktop.DBus.Error.AccessDenied.
            """, members: [
            search,
            count,
            changed,
        ])
    }

    /// Every interface of the API, in the order of the XML.
    public static let interfaces: [InterfaceSpec] = [Manager.spec, CallController.spec, Provider.spec, Call.spec, CallDirectoryUpdate.spec, CallDirectory.spec, Recents.spec, Favorites.spec, AddressBook.spec]
}

extension Telephony1 {
    /// The keys of the API's dictionaries: provider configurations, call updates,
    /// transaction actions (and `StartCall` options), action info, and Recents and
    /// Favorites entries. Some are also `Call` property names, which keep their
    /// meaning.
    /// The most entries an `a{sv}` argument may have: more than any of the contract's dictionaries
    /// has keys. A bigger one is InvalidArgs before it is decoded.
    public static let maximumDictionaryEntries = 64
    /// The most elements an array argument may have: a directory batch of 262,144 numbers (2 MiB),
    /// an icon of 256 KiB. More is InvalidArgs before it is decoded, so that no one call (decoded
    /// while every other app waits) costs more than that.
    public static let maximumArrayElements = 262_144
    /// The most bytes one call's arguments may take on the wire: an icon of 256 KiB and every
    /// other bounded value beside it. A bigger call is InvalidArgs from its header, before it is
    /// decoded; only a directory update's batches (`maximumDirectoryBatchBytes`) are bigger.
    public static let maximumArgumentBytes = 1 << 20
    /// A directory batch on the wire: 262,144 numbers and as many labels of 256 bytes, with
    /// their lengths and padding.
    public static let maximumDirectoryBatchBytes = maximumArrayElements * (8 + 4 + 256 + 1 + 3) + 64

    public enum Key {
        public static let name = "Name"
        public static let maximumCallGroups = "MaximumCallGroups"
        public static let maximumCallsPerCallGroup = "MaximumCallsPerCallGroup"
        public static let supportsVideo = "SupportsVideo"
        public static let supportedHandleTypes = "SupportedHandleTypes"
        public static let includesCallsInRecents = "IncludesCallsInRecents"
        public static let ringtoneSound = "RingtoneSound"
        public static let iconName = "IconName"
        public static let iconData = "IconData"
        public static let urlSchemes = "URLSchemes"
        public static let desktopEntry = "DesktopEntry"
        public static let handle = "Handle"
        public static let handleType = "HandleType"
        public static let localizedCallerName = "LocalizedCallerName"
        public static let supportsHolding = "SupportsHolding"
        public static let supportsGrouping = "SupportsGrouping"
        public static let supportsUngrouping = "SupportsUngrouping"
        public static let supportsDTMF = "SupportsDTMF"
        public static let hasVideo = "HasVideo"
        public static let callUUID = "CallUUID"
        public static let video = "Video"
        public static let contactIdentifier = "ContactIdentifier"
        public static let provider = "Provider"
        public static let onHold = "OnHold"
        public static let muted = "Muted"
        public static let groupWith = "GroupWith"
        public static let digits = "Digits"
        public static let type = "Type"
        public static let transactionUUID = "TransactionUUID"
        public static let date = "Date"
        public static let id = "Id"
        public static let providerName = "ProviderName"
        public static let callerName = "CallerName"
        public static let outgoing = "Outgoing"
        public static let status = "Status"
        public static let endReason = "EndReason"
        public static let startedAt = "StartedAt"
        public static let connectedAt = "ConnectedAt"
        public static let endedAt = "EndedAt"
        public static let seen = "Seen"
        public static let appId = "AppId"
        public static let numbers = "Numbers"
        public static let isFavorite = "IsFavorite"
    }
}

extension ObjectPath {
    /// The API's path components (see `Telephony1.providerPath` and the others).
    enum Component {
        static let provider = "Provider"
        static let call = "Call"
        static let directoryUpdate = "DirectoryUpdate"
        static let search = "Search"
        static let runner = "Runner"
    }
}
