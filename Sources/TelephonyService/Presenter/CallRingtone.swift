import FoundationEssentials
import Ringtone
import TelephonyCore

/// The service's ring: the ringtone of the call that rings on screen, played by the service itself
/// (`Ringer`) and looped until that call stops ringing, is silenced or dismissed, or another takes
/// its place. Calls that do not ring on screen (Do Not Disturb, silenced unknown callers, blocked)
/// never reach it. Follows `CallNotifications`, which says after each change which call that is.
@TelephonyActor
final class CallRingtone {
    private let ringer: Ringer
    private let service: ServiceContext
    /// The call it last asked the ringer to ring (nil: none), and whether with the call-waiting
    /// tone: asked again only when that changes, not on every change of every notification.
    private var ringing: (call: UUID, waiting: Bool)?

    init(ringer: Ringer, service: ServiceContext) {
        self.ringer = ringer
        self.service = service
    }

    /// Rings for `call`, or stops ringing when nil; `waiting`: another call is up, so the
    /// call-waiting tone rather than the ringtone.
    func follow(_ call: Call?, waiting: Bool) {
        guard ringing?.call != call?.uuid || ringing?.waiting != waiting else { return }
        ringing = call.map { ($0.uuid, waiting) }
        guard let call, let provider = service.switchboard.provider(call.provider) else { return ringer.stop() }
        ringer.ring(call.uuid.apiString, sound: Self.sound(provider), app: call.appDisplayName, waiting: waiting)
    }

    /// The provider's `RingtoneSound`: a path (host apps only: a sandboxed app's is checked to be a
    /// name at registration), a theme name, or the theme's default.
    static func sound(_ provider: Provider) -> Ringer.Sound {
        let sound = provider.configuration.ringtoneSound
        if sound.isEmpty { return Ringer.defaultSound }
        return sound.hasPrefix("/") && !provider.isSandboxed ? .file(sound) : .themeName(sound)
    }
}
