import CLibnotify
import FoundationEssentials
import GLibLoop
import Logging
import OrderedCollections
import ScreenText
import Synchronization

/// Notifications through libnotify. All libnotify work happens on a GLib
/// loop thread; a missing or crashed notification server costs one warning,
/// never a blocked caller.
public final class LibnotifyNotifier: Notifier, Sendable {
    private let logger: Logger
    /// Notifications waiting for the loop thread, the newest for each key. The loop thread may
    /// fall behind: with no server libnotify spends five bus round trips failing each one, and a
    /// hung server makes each wait 25 s. It then shows only the newest version of a notification,
    /// nothing for one already withdrawn, and at most `waitingLimit` of them: past that the
    /// oldest waiting are dropped. A soak of 500 calls a second with no server held every call's
    /// notifications here, 5 KB a call, for as long as it ran.
    private let requests = Mutex(Requests())
    static let waitingLimit = 128
    private struct Requests {
        /// Oldest first: a key posted again moves to the end.
        var waiting: OrderedDictionary<String, Request> = [:]
        var generation: UInt64 = 0
        /// Said once: notifications were dropped because the loop thread fell behind.
        var warnedBehind = false
    }
    private struct Request {
        let generation: UInt64
        let notification: DesktopNotification
        let onEvent: @Sendable (NotificationEvent) -> Void
    }
    /// libnotify's notifications and what is known of the server: on the loop thread.
    private let display: LoopBound<Display>

    /// `appName` names us to libnotify; each notification carries its own app name too.
    /// GDBus reads the bus from `DBUS_SESSION_BUS_ADDRESS`. `fallbackDesktopEntry`: the desktop file
    /// id sent for notifications that have none of their own (nil: none is sent).
    public init(appName: String, fallbackDesktopEntry: @escaping @Sendable () -> String? = { nil }, logger: Logger) {
        self.logger = logger
        display = LoopBound(Display(fallbackDesktopEntry: fallbackDesktopEntry, logger: logger), on: .shared)
        display.loop.perform {
            if notify_is_initted() == 0 { _ = notify_init(appName) }
        }
        LibnotifyLog.route(to: logger)
    }

    public func post(_ notification: DesktopNotification, onEvent: @escaping @Sendable (NotificationEvent) -> Void) {
        let key = notification.key
        let (mine, firstDrop): (UInt64, Bool) = requests.withLock { requests in
            requests.generation += 1
            requests.waiting.removeValue(forKey: key)
            requests.waiting[key] = Request(generation: requests.generation, notification: notification, onEvent: onEvent)
            let dropped = requests.waiting.count > Self.waitingLimit
            if dropped { requests.waiting.removeFirst(requests.waiting.count - Self.waitingLimit) }
            let first = dropped && !requests.warnedBehind
            if dropped { requests.warnedBehind = true }
            return (requests.generation, first)
        }
        if firstDrop {
            logger.warning("notifications fall behind (the notification server does not answer): the oldest waiting are dropped unshown")
        }
        // The loop carries only the key: the notification waits in `waiting`, where it can be dropped.
        display.perform { display in
            let request: Request? = self.requests.withLock { requests in
                guard requests.waiting[key]?.generation == mine else { return nil }
                return requests.waiting.removeValue(forKey: key)
            }
            guard let request else { return }
            display.show(request.notification, request.onEvent)
        }
    }

    public func withdraw(_ key: String) {
        requests.withLock { _ = $0.waiting.removeValue(forKey: key) }
        display.perform { $0.withdraw(key) }
    }

    public func serverVanished() {
        requests.withLock { $0.waiting = [:] }
        display.perform { $0.serverVanished() }
    }

    /// What was shown since the last vanishing was shown to this server: a notification that
    /// waited on the loop thread while the server came may already be on it, and is replaced in
    /// place when posted again (never drawn twice). Only what the server is, is asked afresh.
    public func serverAppeared() {
        display.perform { $0.server = .unknown }
    }

    /// The notification server as far as the loop thread knows it.
    private enum ServerKnowledge {
        /// Not asked since it last changed.
        case unknown
        /// Asked, and nobody answered: nothing is shown until a server appears (the owner watch
        /// says so) and the board posts again what should be on screen. Without a server each
        /// notification then costs nothing, not five failed calls to the bus; and one that waited
        /// here while the server came is not drawn before the server's name is known.
        case absent
        case present(ServerTraits)
    }

    /// What the service must make up for in a server, known from its name and version.
    struct ServerTraits: Equatable {
        let name: String
        let capabilities: Set<String>
        /// The server shows no app name with a notification: the body's last line says it.
        let drawsNoAppName: Bool
        /// The server draws at most this many buttons; the rest are lost (GNOME Shell: 3).
        let maximumButtons: Int?
        /// The server draws the `default` action as one more button.
        let drawsDefaultAsButton: Bool
        /// The server draws the body as one line, line breaks as spaces (GNOME Shell 46 and later).
        let drawsBodyAsOneLine: Bool
        /// A notification replaced in place while its banner is on screen loses the banner's
        /// buttons: it is closed and posted anew instead (a new id).
        let dropsButtonsOnUpdate: Bool

        init(name: String, version: String, capabilities: Set<String>) {
            self.name = name
            self.capabilities = capabilities
            let gnomeShell = name == "gnome-shell"
            // "43.9" → 43; a version that says nothing is taken as a current one.
            let major = Int(version.prefix { $0.isNumber }) ?? Int.max
            drawsNoAppName = LibnotifyNotifier.serversWithoutAppName.contains(name) || (gnomeShell && major < 46)
            maximumButtons = gnomeShell ? 3 : nil
            drawsDefaultAsButton = LibnotifyNotifier.serversWithDefaultButton.contains(name)
            drawsBodyAsOneLine = gnomeShell && major >= 46
            dropsButtonsOnUpdate = gnomeShell && major < 46
        }
    }

    /// A notification's texts and desktop entry as `server` draws them, cleaned here, once, where
    /// they leave for the screen, whoever composed them: caller names, handles and labels come from
    /// apps and directories (ScreenText says what goes). Each line of the body is cleaned on its own,
    /// and the body escaped where the server reads markup. (The app's name and the buttons' labels
    /// are cleaned as `Display.show` sets them.)
    struct Layout: Equatable {
        let summary: String
        /// As sent: escaped for a server with `body-markup`.
        let body: String
        let desktopEntry: String

        init(_ notification: DesktopNotification, server: ServerTraits, fallbackDesktopEntry: String?) {
            desktopEntry = notification.desktopEntry.isEmpty ? fallbackDesktopEntry ?? "" : notification.desktopEntry
            // The header names the app of the desktop entry: the fallback's, not this one's.
            let headerNamesOtherApp = !server.drawsNoAppName && notification.desktopEntry.isEmpty && !desktopEntry.isEmpty
            summary = ScreenText.clean(headerNamesOtherApp ? notification.summaryNamingApp ?? notification.summary : notification.summary)
            var body: String
            if server.drawsBodyAsOneLine {
                let lines = notification.oneLineBody.map { [$0] } ?? notification.lines
                body = lines.map(ScreenText.clean).filter { !$0.isEmpty }.joined(separator: " · ")
            } else {
                body = notification.lines.map(ScreenText.clean).joined(separator: "\n")
                if !notification.namesAppInText, server.drawsNoAppName {
                    // The server would not say which app this is: the body's last line does.
                    let app = ScreenText.clean(notification.appName)
                    body = body.isEmpty ? app : body + "\n" + app
                }
            }
            self.body = server.capabilities.contains("body-markup") ? ScreenText.markupEscaped(body) : body
        }
    }

    /// Servers that show no app name with a notification, by their `GetServerInformation` name:
    /// xfce4-notifyd and notification-daemon draw summary, body and icon only, and dunst's default
    /// format is "<b>%s</b>\n%b" (no `%a`). GNOME Shell draws it from 46 on (43 draws none on a
    /// banner), KDE Plasma does; servers not named here are taken to do so too.
    static let serversWithoutAppName: Set<String> = ["Xfce Notify Daemon", "Notification Daemon", "dunst"]

    /// Servers that draw the `default` action as one more button (xfce4-notifyd 0.7) rather than
    /// invoking it on a click on the body: there a `default` action that repeats another button's
    /// label ("Answer" twice) is left out.
    static let serversWithDefaultButton: Set<String> = ["Xfce Notify Daemon"]

    /// The notifier's side on the loop thread, where libnotify is called and delivers its
    /// signals: the notifications shown and who hears them, and what is known of the server.
    /// Only its `LoopBound` reaches it from elsewhere.
    private final class Display {
        let loop = GLibLoop.shared
        let logger: Logger
        var shown: [String: UnsafeMutablePointer<NotifyNotification>] = [:]
        /// Who hears each shown notification's buttons and closing.
        var handlers: [String: @Sendable (NotificationEvent) -> Void] = [:]
        /// Notifications whose button was pressed: a server that closes them afterwards (reason 2,
        /// though they are resident) did not see the user dismiss them.
        var actedOn: Set<String> = []
        /// What is known of the server, asked once per server (`serverAppeared` asks again).
        var server: ServerKnowledge = .unknown
        var warnedUnavailable = false
        /// The `desktop-entry` of a notification whose app has no desktop file: the desktop's per-app
        /// settings (GNOME's details on the lock screen) then apply to it. Asked with the server, once
        /// per server, on the loop thread (it may read the disk).
        let fallbackDesktopEntry: @Sendable () -> String?
        var fallbackEntry: String?

        init(fallbackDesktopEntry: @escaping @Sendable () -> String?, logger: Logger) {
            self.fallbackDesktopEntry = fallbackDesktopEntry
            self.logger = logger
        }

        func withdraw(_ key: String) {
            handlers[key] = nil
            actedOn.remove(key)
            guard let shown = shown.removeValue(forKey: key) else { return }
            var error: UnsafeMutablePointer<GError>?
            notify_notification_close(shown, &error)
            if let error { g_error_free(error) }
            g_object_unref(UnsafeMutableRawPointer(shown))
        }

        func serverVanished() {
            for notification in shown.values { g_object_unref(UnsafeMutableRawPointer(notification)) }
            shown = [:]
            handlers = [:]
            actedOn = []
            server = .unknown
        }

        /// The server's name and version (`GetServerInformation`) and capabilities, asked together
        /// once per server; nil when no server answers.
        private func currentServer() -> ServerTraits? {
            switch server {
            case .present(let traits): return traits
            case .absent: return nil
            case .unknown: break
            }
            var name: UnsafeMutablePointer<CChar>?, vendor: UnsafeMutablePointer<CChar>?
            var version: UnsafeMutablePointer<CChar>?, specVersion: UnsafeMutablePointer<CChar>?
            guard notify_get_server_info(&name, &vendor, &version, &specVersion) != 0 else {
                server = .absent
                return nil
            }
            let serverName = name.map { String(cString: $0) } ?? ""
            let serverVersion = version.map { String(cString: $0) } ?? ""
            for text in [name, vendor, version, specVersion] { g_free(text) }
            var capabilities = Set<String>()
            var list = notify_get_server_caps()
            let head = list
            while let node = list {
                if let data = node.pointee.data { capabilities.insert(String(cString: data.assumingMemoryBound(to: CChar.self))) }
                list = node.pointee.next
            }
            g_list_free_full(head, g_free)
            let traits = ServerTraits(name: serverName, version: serverVersion, capabilities: capabilities)
            server = .present(traits)
            fallbackEntry = fallbackDesktopEntry()
            return traits
        }

        func show(_ notification: DesktopNotification, _ onEvent: @escaping @Sendable (NotificationEvent) -> Void) {
            guard let server = currentServer() else {
                if !warnedUnavailable {
                    logger.warning("cannot show notifications (calls still work): no notification server answers on the session bus")
                    warnedUnavailable = true
                }
                return
            }
            // Every text is cleaned here, once, where it leaves for the screen, whoever composed it:
            // caller names, handles and labels come from apps and directories (ScreenText says what goes).
            let layout = Layout(notification, server: server, fallbackDesktopEntry: fallbackEntry)
            let summary = layout.summary
            let body = layout.body
            let icon = notification.iconName.isEmpty ? nil : notification.iconName
            let target: UnsafeMutablePointer<NotifyNotification>
            if let existing = shown[notification.key], server.dropsButtonsOnUpdate, !notification.actions.isEmpty {
                // GNOME Shell before 46 redraws an updated banner before the new buttons are added: the
                // old one is closed (reason 3, which nobody hears) and this one shown anew below.
                var error: UnsafeMutablePointer<GError>?
                notify_notification_close(existing, &error)
                if let error { g_error_free(error) }
                shown[notification.key] = nil
                loop.perform { g_object_unref(UnsafeMutableRawPointer(existing)) }
            }
            if let existing = shown[notification.key] {
                // Replace in place: same id at the server, so never two notifications for one call.
                notify_notification_update(existing, summary, body, icon)
                notify_notification_clear_actions(existing)
                notify_notification_clear_hints(existing)
                target = existing
            } else {
                guard let created = notify_notification_new(summary, body, icon) else { return }
                target = created
                followClosing(created, key: notification.key)
            }
            handlers[notification.key] = onEvent
            actedOn.remove(notification.key)
            notify_notification_set_app_name(target, ScreenText.clean(notification.appName))
            let timeout: Int32 = switch notification.expiry {
            case .never: NOTIFY_EXPIRES_NEVER
            case .serverDefault: NOTIFY_EXPIRES_DEFAULT
            case .seconds(let seconds): Int32(clamping: seconds * 1000)
            }
            notify_notification_set_timeout(target, timeout)
            notify_notification_set_urgency(target, NotifyUrgency(UInt32(notification.urgency.rawValue)))
            if !notification.category.isEmpty { notify_notification_set_category(target, notification.category) }
            if !notification.imagePNG.isEmpty { setImage(notification.imagePNG, on: target) }
            if notification.resident { notify_notification_set_hint(target, "resident", g_variant_new_boolean(1)) }
            if notification.suppressesSound { notify_notification_set_hint(target, "suppress-sound", g_variant_new_boolean(1)) }
            for (hint, value) in [("sound-file", notification.soundFile), ("sound-name", notification.soundName),
                                  ("desktop-entry", layout.desktopEntry)] where !value.isEmpty {
                notify_notification_set_hint(target, hint, g_variant_new_string(value))
            }
            if server.capabilities.isEmpty || server.capabilities.contains("actions") {
                let key = notification.key
                var actions = notification.actions
                if server.drawsDefaultAsButton {
                    actions.removeAll { action in action.id == "default" && notification.actions.contains { $0.id != "default" && $0.label == action.label } }
                }
                if let maximum = server.maximumButtons {
                    // The ones that matter come first: the rest would be neither drawn nor reachable.
                    var buttons = 0
                    actions.removeAll { action in
                        guard action.id != "default" else { return false }
                        buttons += 1
                        return buttons > maximum
                    }
                }
                for action in actions {
                    let box = Unmanaged.passRetained(ActionBox { [weak self] action in
                        // On the loop thread, where libnotify delivers its signals.
                        self?.actedOn.insert(key)
                        onEvent(.action(action))
                    }).toOpaque()
                    notify_notification_add_action(target, action.id, ScreenText.clean(action.label), { _, action, data in
                        guard let action, let data else { return }
                        Unmanaged<ActionBox>.fromOpaque(data).takeUnretainedValue().handler(String(cString: action))
                    }, box, { data in Unmanaged<ActionBox>.fromOpaque(data!).release() })
                }
            }
            var error: UnsafeMutablePointer<GError>?
            if notify_notification_show(target, &error) != 0 {
                shown[notification.key] = target
                if warnedUnavailable { logger.info("notification server is back") }
                warnedUnavailable = false
            } else {
                let message = error.map { String(cString: $0.pointee.message) } ?? "unknown error"
                if let error { g_error_free(error) }
                if !warnedUnavailable {
                    logger.warning("cannot show notifications (calls still work): \(message)")
                    warnedUnavailable = true
                }
                shown[notification.key] = nil
                handlers[notification.key] = nil
                // The server that answered is failing: ask whoever serves next.
                self.server = .unknown
                g_object_unref(UnsafeMutableRawPointer(target))
            }
        }

        /// libnotify's `closed` signal: the user or the server closed the notification. Its handler
        /// hears it, unless we withdrew it ourselves (reason 3) or a button was pressed first.
        private func followClosing(_ notification: UnsafeMutablePointer<NotifyNotification>, key: String) {
            let box = Unmanaged.passRetained(ClosedBox(key: key, display: self)).toOpaque()
            let closed: @convention(c) (UnsafeMutableRawPointer?, UnsafeMutableRawPointer?) -> Void = { notification, data in
                guard let notification, let data else { return }
                let box = Unmanaged<ClosedBox>.fromOpaque(data).takeUnretainedValue()
                let reason = notify_notification_get_closed_reason(notification.assumingMemoryBound(to: NotifyNotification.self))
                box.display?.closed(notification.assumingMemoryBound(to: NotifyNotification.self), key: box.key, reason: reason)
            }
            g_signal_connect_data(UnsafeMutableRawPointer(notification), "closed", unsafeBitCast(closed, to: GCallback.self), box,
                                  { data, _ in if let data { Unmanaged<ClosedBox>.fromOpaque(data).release() } }, GConnectFlags(rawValue: 0))
        }

        /// On the loop thread: a notification we showed was closed (reason 1 expired, 2 dismissed, 3 withdrawn).
        private func closed(_ notification: UnsafeMutablePointer<NotifyNotification>, key: String, reason: Int32) {
            guard shown[key] == notification, reason == 1 || reason == 2 else { return }
            shown[key] = nil
            let handler = handlers.removeValue(forKey: key)
            let acted = actedOn.remove(key) != nil
            // Released after the signal's emission, not inside it.
            loop.perform { g_object_unref(UnsafeMutableRawPointer(notification)) }
            if reason == 1 { handler?(.expired) } else if !acted { handler?(.dismissed) }
        }

        private final class ClosedBox {
            let key: String
            weak var display: Display?
            init(key: String, display: Display) {
                self.key = key
                self.display = display
            }
        }

        /// Decodes the PNG with gdk-pixbuf; libnotify sends it as `image-data`. A bad image is skipped.
        private func setImage(_ png: [UInt8], on notification: UnsafeMutablePointer<NotifyNotification>) {
            guard let loader = gdk_pixbuf_loader_new() else { return }
            defer { g_object_unref(UnsafeMutableRawPointer(loader)) }
            var error: UnsafeMutablePointer<GError>?
            let written = png.withUnsafeBufferPointer { gdk_pixbuf_loader_write(loader, $0.baseAddress, gsize($0.count), &error) }
            // Closing is required either way; its error only matters when the write went through.
            let closed = error == nil ? gdk_pixbuf_loader_close(loader, &error) : gdk_pixbuf_loader_close(loader, nil)
            if let error {
                logger.debug("provider icon is not a usable PNG: \(String(cString: error.pointee.message))")
                g_error_free(error)
                return
            }
            guard written != 0, closed != 0, let pixbuf = gdk_pixbuf_loader_get_pixbuf(loader) else { return }
            notify_notification_set_image_from_pixbuf(notification, pixbuf)
        }

        /// A button's handler, which libnotify calls on the loop thread.
        private final class ActionBox {
            let handler: (String) -> Void
            init(_ handler: @escaping (String) -> Void) { self.handler = handler }
        }
    }
}

/// libnotify's own warnings ("Failed to connect to proxy", once per notification while there is no
/// server) go to our log at debug level: the notifier says once that notifications cannot be shown.
enum LibnotifyLog {
    private static let logger = Mutex<Logger?>(nil)

    static func route(to logger: Logger) {
        Self.logger.withLock { installed in
            guard installed == nil else { return }
            installed = logger
            let handler: @convention(c) (UnsafePointer<CChar>?, GLogLevelFlags, UnsafePointer<CChar>?, UnsafeMutableRawPointer?) -> Void = { _, _, message, _ in
                guard let message else { return }
                LibnotifyLog.logger.withLock { $0 }?.debug("libnotify: \(String(cString: message))")
            }
            let levels = GLogLevelFlags(rawValue: G_LOG_LEVEL_WARNING.rawValue | G_LOG_LEVEL_MESSAGE.rawValue | G_LOG_LEVEL_CRITICAL.rawValue)
            g_log_set_handler("libnotify", levels, handler, nil)
        }
    }
}
