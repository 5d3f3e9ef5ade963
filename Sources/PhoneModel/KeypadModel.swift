import DBus
import FoundationEssentials
import Localization
import MonkeyCallAPI
import MonkeyCallClient
import ScreenText

/// An app that can place a call from the keypad.
public struct CallingApp: Equatable, Sendable {
    public let path: ObjectPath
    public let name: String
}

/// The keypad: a number typed, pressed or pasted (a `tel:` link too), and which app calls it.
public final class KeypadModel: ModelPart {
    public private(set) var number = ""
    /// The apps that call phone numbers, in the order they registered.
    public private(set) var apps: [CallingApp] = []
    /// The user's remembered `tel` choice (an app key), if any.
    public private(set) var remembered: String?

    public func loadApps() async {
        await change {
            apps = try await backend.providers().filter { $0.handleTypes.contains(Telephony1.HandleTypes.phoneNumber) }
                .map { CallingApp(path: $0.path, name: $0.name) }
            remembered = (try? await backend.linkHandlers())?["tel"]
        }
    }

    /// Whether the user must pick the app: several could call and none is remembered among them.
    public var needsChoice: Bool { apps.count > 1 && !apps.contains { $0.name == remembered } }

    public func press(_ key: String) {
        number += key
        onChange()
    }

    public func backspace() {
        guard !number.isEmpty else { return }
        number.removeLast()
        onChange()
    }

    /// What the entry holds now, typed or pasted: a `tel:` link becomes its number.
    public func setText(_ text: String) {
        let cleaned = Self.number(fromText: text)
        guard cleaned != number else { return }
        number = cleaned
        onChange()
    }

    /// A handle from outside (the app's `call` action: a link, a search result, another program)
    /// put on the keypad; true when it may be called at once. One that held control or bidi
    /// characters is not: the keypad shows it cleaned, and the user calls it if it is what they
    /// meant (a host tool could otherwise dial `+1900…` dressed as another number, at once).
    public func take(_ handle: String) -> Bool {
        // Longer than any handle the service takes (1 KiB, TelephonyCore's Limits): not put in the
        // entry at all, where GTK would lay it out for seconds (100,000 combining accents: 4.6 s).
        guard handle.utf8.count <= Self.maximumHandleBytes else {
            report.say(tr("The number was too long to be a phone number or address, and was not called"))
            return false
        }
        setText(handle)
        guard ScreenText.handleHazard(in: Self.decoded(handle)) == nil else {
            report.say(tr("The number held hidden characters and was not called: check it, then call"))
            return false
        }
        return true
    }

    /// The service's bound on a handle, in bytes of UTF-8.
    public nonisolated static let maximumHandleBytes = 1_024

    /// `tel:+1-408-555-0142;ext=2` → `+1-408-555-0142`; other text as it is, trimmed, with no
    /// control or bidi characters (`ScreenText.cleanHandle`: what is shown is what is called).
    public nonisolated static func number(fromText text: String) -> String {
        ScreenText.cleanHandle(decoded(text))
    }

    /// A `tel:` link's number percent-decoded, other text as it is; trimmed, not cleaned.
    nonisolated static func decoded(_ text: String) -> String {
        var value = text.trimmingWhitespace()
        if value.lowercased().hasPrefix("tel:") {
            value = String(value.dropFirst(4))
            if value.hasPrefix("//") { value = String(value.dropFirst(2)) }
            if let parameters = value.firstIndex(where: { $0 == ";" || $0 == "?" }) { value = String(value[..<parameters]) }
            value = ScreenText.percentDecoded(value) ?? value
        }
        return value
    }

    /// Why the number cannot be called, in plain words; nil when it can.
    public var problem: String? {
        if number.filter(\.isNumber).isEmpty { return tr("Type a number to call") }
        if apps.isEmpty { return tr("No app that makes phone calls is running") }
        return nil
    }

    /// Calls the number with `app` (nil: the remembered or only app); remembers the choice when asked.
    @discardableResult
    public func call(with app: CallingApp? = nil, remember: Bool = false) async -> String? {
        if let problem {
            report.say(problem)
            return nil
        }
        let chosen = app ?? apps.first { $0.name == remembered } ?? (apps.count == 1 ? apps[0] : nil)
        do {
            if remember, let chosen { try await backend.setLinkHandler(scheme: "tel", app: chosen.name) }
            let uuid = try await backend.startCall(handle: number, handleType: Telephony1.HandleTypes.phoneNumber, provider: chosen?.path)
            if remember { remembered = chosen?.name }
            return uuid
        } catch {
            report.error(error)
            return nil
        }
    }
}
