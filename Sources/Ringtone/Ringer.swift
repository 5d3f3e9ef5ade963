import BoundedFile
internal import CCanberra
import Dispatch
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
///
/// That thread also shows every call's notification, so no file is looked up or opened there:
/// sounds are found and opened on a queue of their own (`SoundFile`, `SoundTheme`), and
/// libcanberra plays the descriptor opened, never a name or a path it would resolve itself.
public final class Ringer: Sendable {
    /// What to play: a sound-theme name (`phone-incoming-call`), or a file (host apps only).
    public enum Sound: Sendable, Equatable, CustomStringConvertible {
        case themeName(String)
        case file(String)

        public var description: String {
            switch self {
            case .themeName(let name): name
            case .file(let path): path
            }
        }
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

    /// Where sound files are found and opened, off the loop's thread; `ring` and `stop` pass
    /// through it in order on their way to the loop.
    private let files = DispatchQueue(label: "org.monkeycall.ringtone.files", qos: .userInitiated)
    private let logger: Logger
    /// libcanberra's context and the ring in progress, on the loop's thread.
    private let player: LoopBound<Player>

    private struct Ring {
        let key: String
        /// What plays: open while the ring lasts, so every loop plays the file that was checked.
        var sound: SoundFile
        /// The theme's default, opened beside it: what plays when `sound` cannot (nil for the
        /// call-waiting tone, which has none, or when `sound` is the default).
        var fallback: SoundFile?
        let app: String
        /// The call-waiting tone, rather than the ringtone.
        let waiting: Bool
        /// libcanberra's id of the play in progress.
        var id: UInt32
    }

    public init(applicationName: String, logger: Logger) {
        self.logger = logger
        player = LoopBound(Player(applicationName: applicationName, logger: logger), on: .shared)
    }

    /// Rings for `key` (a call), looping `sound` for the app `app` until `stop`; `waiting` (another
    /// call is up): the call-waiting tone instead, every few seconds. A ring for another key, or the
    /// same key waiting or not, replaces it (one ring at a time); the same ring again changes nothing.
    public func ring(_ key: String, sound: Sound, app: String, waiting: Bool = false) {
        files.async {
            let wanted = waiting ? Self.waitingSound : sound
            let opened = self.open(wanted)
            let fallback = waiting || wanted == Self.defaultSound ? nil : self.open(Self.defaultSound)
            self.player.perform { $0.ring(key, opened: opened, fallback: fallback, app: app, waiting: waiting) }
        }
    }

    /// Stops the ring for `key` (nil: whatever rings). With nothing left to ring, the connection
    /// to the sound server goes too (its thread and buffers): the next ring opens one again.
    public func stop(_ key: String? = nil) {
        // Through the files' queue, as `ring` goes: a stop never overtakes the ring it stops.
        files.async {
            self.player.perform { $0.stop(key) }
        }
    }

    // MARK: On the files' queue

    /// The sound opened and checked (a regular file of at most `maximumFileBytes`): a file (host
    /// apps only) or a theme name found as libcanberra would find it; nil, and said, when it
    /// cannot be: missing, not a regular file (a FIFO stalls whoever opens it), or huge.
    private func open(_ sound: Sound) -> SoundFile? {
        do throws(SoundLookupFailure) {
            switch sound {
            case .file(let path):
                do {
                    return try SoundFile.open(path, name: path, maximumBytes: Self.maximumFileBytes)
                } catch {
                    throw .unusable(error)
                }
            case .themeName(let name):
                return try SoundTheme.open(name, maximumBytes: Self.maximumFileBytes)
            }
        } catch {
            let reason = switch error {
            case .unusable(let failure) where failure.reason == .tooLarge(limit: Self.maximumFileBytes):
                "\(failure.path) is larger than \(Self.maximumFileBytes >> 20) MiB"
            default: "\(error)"
            }
            logger.warning("ringtone \(sound) cannot play: \(reason)\(sound == Self.defaultSound ? "" : "; the default rings")")
            return nil
        }
    }

    // MARK: On the loop thread

    /// The ringer's side on the loop's thread, where every libcanberra call is made: the context,
    /// the ring in progress. Only its `LoopBound` reaches it from elsewhere.
    private final class Player {
        let loop = GLibLoop.shared
        let logger: Logger
        let applicationName: String
        var context: OpaquePointer?
        var ringing: Ring?
        var nextID: UInt32 = 1
        var warned = false

        init(applicationName: String, logger: Logger) {
            self.applicationName = applicationName
            self.logger = logger
        }

        /// Rings `opened` (else `fallback`) for `key`, unless that ring already goes on.
        func ring(_ key: String, opened: SoundFile?, fallback: SoundFile?, app: String, waiting: Bool) {
            if let ringing, ringing.key == key, ringing.waiting == waiting { return }
            cancelCurrent()
            // Neither could be opened (said when they were tried): nothing rings this call.
            guard let playing = opened ?? fallback else { return }
            ringing = Ring(key: key, sound: playing, fallback: opened == nil ? nil : fallback, app: app, waiting: waiting, id: 0)
            play()
        }

        /// Stops the ring for `key` (nil: whatever rings), and lets the sound server's connection go.
        func stop(_ key: String?) {
            guard let ringing, key == nil || ringing.key == key else { return }
            cancelCurrent()
            if let context {
                ca_context_destroy(context)
                self.context = nil
            }
        }

        private func cancelCurrent() {
            guard let ringing else { return }
            self.ringing = nil
            if let context { ca_context_cancel(context, ringing.id) }
        }

        /// The context, made and connected at the first ring; nil (and said once) when there is no
        /// sound server: the next ring tries again.
        private func openContext() -> OpaquePointer? {
            if let context { return context }
            guard SoundServerSocket.mayAnswer() else {
                warnOnce("cannot ring: no sound server (nothing at its socket); calls still work, the next ring tries again")
                return nil
            }
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
            // The descriptor's file, never a name for libcanberra to look up (no event.id): its lookup
            // and open would run here, on the thread that shows calls. media.name names the sound as
            // libcanberra named it from event.id or the path (pavucontrol shows it).
            ca_proplist_sets(properties, "media.filename", ring.sound.playablePath)
            ca_proplist_sets(properties, "media.name", ring.sound.name)
            ca_proplist_sets(properties, "media.role", "phone")
            ca_proplist_sets(properties, "event.description", ring.waiting ? "Call waiting" : "Incoming call")
            ca_proplist_sets(properties, "application.name", ring.app.isEmpty ? applicationName : ring.app)
            // Never cached in the server: a file may change between calls.
            ca_proplist_sets(properties, "canberra.cache-control", "never")
            let box = Unmanaged.passRetained(FinishBox(player: self, id: ring.id)).toOpaque()
            let result = ca_context_play_full(context, ring.id, properties, { _, _, error, data in
                // On libcanberra's thread: back to the loop.
                let box = Unmanaged<FinishBox>.fromOpaque(data!).takeRetainedValue()
                box.player?.loop.perform { box.player?.finished(box.id, error) }
            }, box)
            if result != Int32(CA_SUCCESS) {
                // Not started: the callback will not come.
                Unmanaged<FinishBox>.fromOpaque(box).release()
                failed(ring, result)
            }
        }

        private final class FinishBox {
            weak var player: Player?
            let id: UInt32
            init(player: Player, id: UInt32) {
                self.player = player
                self.id = id
            }
        }

        /// A play ended: again while its ring goes on (the call-waiting tone after a pause); a failure
        /// falls back or gives up.
        private func finished(_ id: UInt32, _ error: Int32) {
            guard let ring = ringing, ring.id == id else { return }
            if error == Int32(CA_SUCCESS) {
                guard ring.waiting else { return play() }
                loop.perform(afterMilliseconds: Ringer.waitingPauseMilliseconds) {
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
            if let fallback = ring.fallback {
                logger.warning("cannot play ringtone \(ring.sound.name) (\(reason)): the default rings")
                ringing?.sound = fallback
                ringing?.fallback = nil
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
}
