import CLibnotify
import Foundation
import Logging
import ScreenText

/// Notifications through libnotify. All libnotify work happens on a GLib
/// loop thread; a missing or crashed notification server costs one warning,
/// never a blocked caller.
public final class LibnotifyNotifier: Notifier, @unchecked Sendable {
    private let loop = GLibLoop.shared
    private let logger: Logger
    // Only touched on the loop thread.
    private var shown: [String: UnsafeMutablePointer<NotifyNotification>] = [:]
    private var capabilities: Set<String>?
    private var warnedUnavailable = false
    /// The newest request for each key. The loop thread may fall behind (a slow
    /// or absent server); it then shows only the newest version of a
    /// notification, and nothing for one already withdrawn.
    private let requests = NSLock()
    private var newest: [String: UInt64] = [:]
    private var generation: UInt64 = 0

    /// `appName` names us to libnotify; each notification carries its own app name too.
    /// GDBus reads the bus from `DBUS_SESSION_BUS_ADDRESS`.
    public init(appName: String, logger: Logger) {
        self.logger = logger
        loop.perform {
            if notify_is_initted() == 0 { _ = notify_init(appName) }
        }
    }

    public func post(_ notification: DesktopNotification, onAction: @escaping @Sendable (String) -> Void) {
        let mine: UInt64 = requests.withLock {
            generation += 1
            newest[notification.key] = generation
            return generation
        }
        loop.perform {
            guard self.requests.withLock({ self.newest[notification.key] == mine }) else { return }
            self.show(notification, onAction)
        }
    }

    public func withdraw(_ key: String) {
        requests.withLock { _ = newest.removeValue(forKey: key) }
        loop.perform {
            guard let shown = self.shown.removeValue(forKey: key) else { return }
            var error: UnsafeMutablePointer<GError>?
            notify_notification_close(shown, &error)
            if let error { g_error_free(error) }
            g_object_unref(UnsafeMutableRawPointer(shown))
        }
    }

    public func reset() {
        requests.withLock { newest = [:] }
        loop.perform {
            for notification in self.shown.values { g_object_unref(UnsafeMutableRawPointer(notification)) }
            self.shown = [:]
            self.capabilities = nil
        }
    }

    /// The server's capabilities, read once per server; empty when there is none.
    private func serverCapabilities() -> Set<String> {
        if let capabilities { return capabilities }
        var result = Set<String>()
        var list = notify_get_server_caps()
        let head = list
        while let node = list {
            if let data = node.pointee.data { result.insert(String(cString: data.assumingMemoryBound(to: CChar.self))) }
            list = node.pointee.next
        }
        g_list_free_full(head, g_free)
        if !result.isEmpty { capabilities = result }
        return result
    }

    private func show(_ notification: DesktopNotification, _ onAction: @escaping @Sendable (String) -> Void) {
        let capabilities = serverCapabilities()
        // Every text is cleaned here, where it leaves for the screen, whoever composed it: caller
        // names, handles and labels come from apps and directories (ScreenText says what goes).
        let summary = ScreenText.clean(notification.summary)
        let plainBody = ScreenText.cleanKeepingLineBreaks(notification.body)
        let body = capabilities.contains("body-markup") ? ScreenText.markupEscaped(plainBody) : plainBody
        let icon = notification.iconName.isEmpty ? nil : notification.iconName
        let target: UnsafeMutablePointer<NotifyNotification>
        if let existing = shown[notification.key] {
            // Replace in place: same id at the server, so never two notifications for one call.
            notify_notification_update(existing, summary, body, icon)
            notify_notification_clear_actions(existing)
            notify_notification_clear_hints(existing)
            target = existing
        } else {
            guard let created = notify_notification_new(summary, body, icon) else { return }
            target = created
        }
        notify_notification_set_app_name(target, ScreenText.clean(notification.appName))
        notify_notification_set_timeout(target, notification.expires ? NOTIFY_EXPIRES_DEFAULT : NOTIFY_EXPIRES_NEVER)
        notify_notification_set_urgency(target, NotifyUrgency(UInt32(notification.urgency.rawValue)))
        if !notification.category.isEmpty { notify_notification_set_category(target, notification.category) }
        if !notification.imagePNG.isEmpty { setImage(notification.imagePNG, on: target) }
        if notification.resident { notify_notification_set_hint(target, "resident", g_variant_new_boolean(1)) }
        for (hint, value) in [("sound-file", notification.soundFile), ("sound-name", notification.soundName),
                              ("desktop-entry", notification.desktopEntry)] where !value.isEmpty {
            notify_notification_set_hint(target, hint, g_variant_new_string(value))
        }
        if capabilities.isEmpty || capabilities.contains("actions") {
            for action in notification.actions {
                let box = Unmanaged.passRetained(ActionBox(onAction)).toOpaque()
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
            self.capabilities = nil
            g_object_unref(UnsafeMutableRawPointer(target))
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

    private final class ActionBox {
        let handler: @Sendable (String) -> Void
        init(_ handler: @escaping @Sendable (String) -> Void) { self.handler = handler }
    }
}
