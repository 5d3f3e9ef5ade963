internal import CCanberra
import FoundationEssentials
import GLibLoop
import Logging

/// A ringtone: one sound looped through the session's sound server (PulseAudio, or PipeWire's
/// pulse server) with libcanberra, until it is stopped. Notification servers play a sound once at
/// most (GNOME Shell never while locked): a phone rings until it is answered, so the one who rings
/// loops it.
///
/// Every libcanberra call is made on the shared GLib loop's thread, in order; the context is made
/// at the first ring, so that a daemon that never rings never loads the sound server's client.
/// No sound server, or one that goes away: calls do not notice, one warning is logged, and the
/// next ring tries again.
public final class Ringer: @unchecked Sendable {
    /// What to play: a sound-theme name (`phone-incoming-call`), or a file (host apps only).
    public enum Sound: Sendable, Equatable {
        case themeName(String)
        case file(String)
    }

    /// The freedesktop sound theme's ringtone: played when no other is given or the given one fails.
    public static let defaultSound = Sound.themeName("phone-incoming-call")
    /// While another call is up: a short tone, repeated after a pause, never the ringtone over a
    /// conversation (the freedesktop theme has no call-waiting sound; this is its shortest chime).
    public static let waitingSound = Sound.themeName("message-new-instant")
    /// The pause between two call-waiting tones.
    public static let waitingPauseMilliseconds: UInt32 = 3000
    /// Sound files past this size are not played (the theme's default is): a ringtone is seconds long.
    public static let maximumFileBytes = 16 << 20

    private let loop = GLibLoop.shared
    private let logger: Logger
    private let applicationName: String
    // Only touched on the loop thread.
    private var context: OpaquePointer?
    private var ringing: Ring?
    private var nextID: UInt32 = 1
    private var warned = false

    private struct Ring {
        let key: String
        var sound: Sound
        let app: String
        /// The call-waiting tone, rather than the ringtone.
        let waiting: Bool
        /// libcanberra's id of the play in progress.
        var id: UInt32
    }

    public init(applicationName: String, logger: Logger) {
        self.applicationName = applicationName
        self.logger = logger
    }

    /// Rings for `key` (a call), looping `sound` for the app `app` until `stop`; `waiting` (another
    /// call is up): the call-waiting tone instead, every few seconds. A ring for another key, or the
    /// same key waiting or not, replaces it (one ring at a time); the same ring again changes nothing.
    public func ring(_ key: String, sound: Sound, app: String, waiting: Bool = false) {
        loop.perform {
            if let ringing = self.ringing, ringing.key == key, ringing.waiting == waiting { return }
            self.cancelCurrent()
            self.ringing = Ring(key: key, sound: waiting ? Self.waitingSound : self.playable(sound), app: app, waiting: waiting, id: 0)
            self.play()
        }
    }

    /// Stops the ring for `key` (nil: whatever rings). With nothing left to ring, the connection
    /// to the sound server goes too (its thread and buffers): the next ring opens one again.
    public func stop(_ key: String? = nil) {
        loop.perform {
            guard let ringing = self.ringing, key == nil || ringing.key == key else { return }
            self.cancelCurrent()
            if let context = self.context {
                ca_context_destroy(context)
                self.context = nil
            }
        }
    }

    // MARK: On the loop thread

    private func cancelCurrent() {
        guard let ringing else { return }
        self.ringing = nil
        if let context { ca_context_cancel(context, ringing.id) }
    }

    /// The sound itself, or the default when a file cannot be what it says (missing, not a
    /// regular file, or huge); libcanberra reports one it cannot decode, and the default plays then.
    private func playable(_ sound: Sound) -> Sound {
        guard case .file(let path) = sound else { return sound }
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: path),
              attributes[.type] as? FileAttributeType == .typeRegular,
              let size = (attributes[.size] as? any BinaryInteger).map({ Int(clamping: $0) }), size <= Self.maximumFileBytes else {
            logger.warning("ringtone \(path) is missing, not a file, or larger than \(Self.maximumFileBytes >> 20) MiB: the default rings")
            return Self.defaultSound
        }
        return sound
    }

    /// The context, made and connected at the first ring; nil (and said once) when there is no
    /// sound server: the next ring tries again.
    private func openContext() -> OpaquePointer? {
        if let context { return context }
        var made: OpaquePointer?
        guard ca_context_create(&made) == Int32(CA_SUCCESS), let made else { return nil }
        var properties: OpaquePointer?
        ca_proplist_create(&properties)
        ca_proplist_sets(properties, "application.name", applicationName)
        ca_proplist_sets(properties, "application.id", "org.monkeycall.Telephony1")
        ca_context_change_props_full(made, properties)
        ca_proplist_destroy(properties)
        // The session's sound server only (PulseAudio, or PipeWire's pulse server): never a sound
        // card behind its back.
        ca_context_set_driver(made, "pulse")
        let opened = ca_context_open(made)
        guard opened == Int32(CA_SUCCESS) else {
            warnOnce("cannot ring: no sound server (\(String(cString: ca_strerror(opened)))); calls still work, the next ring tries again")
            ca_context_destroy(made)
            return nil
        }
        context = made
        if warned {
            // Said once per outage: the next one is said again.
            warned = false
            logger.info("the sound server answers again: calls ring")
        }
        return made
    }

    private func warnOnce(_ message: String) {
        guard !warned else { return }
        warned = true
        logger.warning("\(message)")
    }

    /// Plays the current ring's sound once; when it ends, `finished` plays it again.
    private func play() {
        guard var ring = ringing, let context = openContext() else {
            ringing = nil
            return
        }
        ring.id = nextID
        nextID = nextID == UInt32.max ? 1 : nextID + 1
        ringing = ring
        var properties: OpaquePointer?
        ca_proplist_create(&properties)
        defer { ca_proplist_destroy(properties) }
        switch ring.sound {
        case .themeName(let name): ca_proplist_sets(properties, "event.id", name)
        case .file(let path): ca_proplist_sets(properties, "media.filename", path)
        }
        ca_proplist_sets(properties, "media.role", "phone")
        ca_proplist_sets(properties, "event.description", ring.waiting ? "Call waiting" : "Incoming call")
        ca_proplist_sets(properties, "application.name", ring.app.isEmpty ? applicationName : ring.app)
        // Never cached in the server: a file may change between calls.
        ca_proplist_sets(properties, "canberra.cache-control", "never")
        let box = Unmanaged.passRetained(FinishBox(ringer: self, id: ring.id)).toOpaque()
        let result = ca_context_play_full(context, ring.id, properties, { _, _, error, data in
            // On libcanberra's thread: back to the loop.
            let box = Unmanaged<FinishBox>.fromOpaque(data!).takeRetainedValue()
            box.ringer?.loop.perform { box.ringer?.finished(box.id, error) }
        }, box)
        if result != Int32(CA_SUCCESS) {
            // Not started: the callback will not come.
            Unmanaged<FinishBox>.fromOpaque(box).release()
            failed(ring, result)
        }
    }

    private final class FinishBox {
        weak var ringer: Ringer?
        let id: UInt32
        init(ringer: Ringer, id: UInt32) {
            self.ringer = ringer
            self.id = id
        }
    }

    /// A play ended: again while its ring goes on (the call-waiting tone after a pause); a failure
    /// falls back or gives up.
    private func finished(_ id: UInt32, _ error: Int32) {
        guard let ring = ringing, ring.id == id else { return }
        if error == Int32(CA_SUCCESS) {
            guard ring.waiting else { return play() }
            loop.perform(afterMilliseconds: Self.waitingPauseMilliseconds) {
                // Still the same ring, not stopped or replaced meanwhile.
                guard self.ringing?.id == id else { return }
                self.play()
            }
        } else if error != Int32(CA_ERROR_CANCELED) {
            failed(ring, error)
        }
    }

    private func failed(_ ring: Ring, _ error: Int32) {
        let reason = String(cString: ca_strerror(error))
        // The call-waiting tone has no fallback: never the ringtone over a conversation.
        if ring.sound != Self.defaultSound, !ring.waiting {
            logger.warning("cannot play ringtone \(ring.sound) (\(reason)): the default rings")
            ringing?.sound = Self.defaultSound
            play()
            return
        }
        warnOnce("cannot ring (\(reason)); calls still work, the next ring tries again")
        ringing = nil
        // Whatever failed (a server that went away reports disconnected, state or I/O errors), the
        // next ring starts from a new context: one made per failed ring costs nothing.
        if let context {
            ca_context_destroy(context)
            self.context = nil
        }
    }
}
