import DBus
import FoundationEssentials
import Logging
import QueueExecutor
import TelephonyCore

/// Pauses the desktop's media players (MPRIS, `org.mpris.MediaPlayer2.*`)
/// while a call holds the audio session, and afterwards resumes exactly the
/// ones it paused, unless the user started or stopped one in between (then it
/// is theirs again) or it left the bus.
///
/// The rounds run on the actor and suspend at each D-Bus round trip to a player, so the service
/// goes on meanwhile; one round runs after the other (pause, resume, pause, ...), so that a quick
/// end and new call cannot interleave them.
@TelephonyActor
final class MediaPause: SwitchboardObserver {
    static let namePrefix = "org.mpris.MediaPlayer2."
    static let path: ObjectPath = "/org/mpris/MediaPlayer2"
    static let player = "org.mpris.MediaPlayer2.Player"
    /// A player that does not answer in time is left as it is.
    static let timeout: Duration = .seconds(3)

    private let connection: Connection
    /// Who holds the audio session.
    private let switchboard: Switchboard
    private let logger: Logger
    /// Whether a new call pauses players: the daemon option and the user's setting.
    private let isEnabled: () -> Bool
    /// Whether a call holds the audio session, as last told.
    private var inCall = false
    /// The players we paused, by unique name, each with the watch for it leaving the bus.
    private var paused: [String: Subscription] = [:]
    /// PlaybackStatus changes of every player, while any is paused by us.
    private var statusWatch: Subscription?
    /// The last round of pausing or resuming; the next one waits for it.
    private var lastRound: Task<Void, Never>?
    /// The players on the bus: each well-known name with its unique owner, followed from
    /// NameOwnerChanged, so that a call asks the bus nothing when there is no player.
    private var players: [String: String] = [:]
    private var playersWatch: Subscription?
    /// While the players already on the bus are listed: the names that changed meanwhile (their signal wins).
    private var changedWhileListing: Set<String>?

    init(connection: Connection, switchboard: Switchboard, logger: Logger, isEnabled: @escaping () -> Bool) {
        self.connection = connection
        self.switchboard = switchboard
        self.logger = logger
        self.isEnabled = isEnabled
    }

    func observe(_ event: SwitchboardEvent) {
        switch event {
        case .audioSessionActivated, .audioSessionDeactivated:
            // Passing from one call's provider to another's is a deactivation then an activation;
            // events come once the operation is complete, so the holder now is the one that stays.
            audioSession(held: switchboard.audioSessionHolder != nil)
        default:
            break
        }
    }

    /// Whether any call holds the audio session now.
    func audioSession(held: Bool) {
        guard held != inCall else { return }
        inCall = held
        let previous = lastRound
        lastRound = Task(executorPreference: SerialTaskExecutor.shared) { [weak self] in
            await previous?.value
            if held { await self?.pausePlaying() } else { await self?.resumePaused() }
        }
    }

    /// Starts following the players on the bus. After `Connection.followNameOwners()`.
    func followPlayers() async {
        let watch = try? await connection.watchNameOwnerChanges(TelephonyActor.onQueue { [weak self] change in self?.nameOwnerChanged(change) })
        playersWatch = watch
        changedWhileListing = []
        var listed: [String: String] = [:]
        for name in (try? await connection.listNames()) ?? [] where name.hasPrefix(Self.namePrefix) {
            // A player that left in the meantime simply is not there.
            if let owner = try? await connection.nameOwner(name) { listed[name] = owner }
        }
        let changed = changedWhileListing ?? []
        changedWhileListing = nil
        for (name, owner) in listed where !changed.contains(name) { players[name] = owner }
    }

    /// A name changed owner; only players' names are kept.
    private func nameOwnerChanged(_ change: NameOwnerChange) {
        guard change.name.hasPrefix(Self.namePrefix) else { return }
        players[change.name] = change.newOwner.isEmpty ? nil : change.newOwner
        changedWhileListing?.insert(change.name)
    }

    /// Waits for the rounds started so far (for tests and a clean shutdown).
    func settle() async {
        await lastRound?.value
    }

    // MARK: Rounds

    private func pausePlaying() async {
        // A player with several names counts once.
        let owners: Set<String> = inCall && isEnabled() ? Set(players.values) : []
        guard !owners.isEmpty else { return }
        if statusWatch == nil {
            let rule = MatchRule(path: Self.path, interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged", arg0: Self.player)
            statusWatch = try? await connection.subscribe(rule, handler: TelephonyActor.onQueue { [weak self] message in self?.statusChanged(message) })
        }
        await each(owners) { [self] owner in
            guard await status(of: owner) == "Playing" else { return }
            // Remembered before asking: the user's Play right after our Pause may be handled before Pause's reply.
            remember(owner)
            if await control(owner, "Pause") {
                logger.info("paused media player \(owner) for the call")
            } else {
                paused[owner] = nil
            }
        }
    }

    private func resumePaused() async {
        // A new call may have taken the audio session before this round began: the players stay paused for it.
        guard !inCall else { return }
        let owners = Array(paused.keys)
        paused = [:]
        statusWatch = nil
        await each(owners) { [self] owner in
            // Still as we left it? A player that did not announce the user's change is caught here.
            guard await status(of: owner) == "Paused", await control(owner, "Play") else { return }
            logger.debug("resumed media player \(owner)")
        }
    }

    /// Players are asked side by side: a slow one does not hold up the others.
    private func each(_ owners: some Sequence<String>, _ work: @escaping @Sendable @TelephonyActor (String) async -> Void) async {
        await withTaskGroup(of: Void.self) { group in
            for owner in owners { group.addTask { await work(owner) } }
        }
    }

    private func status(of owner: String) async -> String? {
        do {
            let reply = try await connection.call(destination: owner, path: Self.path, interface: "org.freedesktop.DBus.Properties", member: "Get",
                                                  [.string(Self.player), .string("PlaybackStatus")], timeout: Self.timeout)
            guard case .string(let status)? = reply.first?.unwrappedVariant else { return nil }
            return status
        } catch {
            // Gone, hung or not a player after all: nothing to pause or resume.
            logger.debug("cannot read PlaybackStatus of media player \(owner): \(error)")
            return nil
        }
    }

    /// Play or Pause; false when the player did not do it (gone, hung, refused).
    private func control(_ owner: String, _ member: String) async -> Bool {
        do {
            try await connection.call(destination: owner, path: Self.path, interface: Self.player, member: member, timeout: Self.timeout)
            return true
        } catch {
            logger.debug("media player \(owner) did not \(member): \(error)")
            return false
        }
    }

    private func remember(_ owner: String) {
        paused[owner] = connection.watchVanishing(of: owner) { [weak self] in
            guard let self, paused.removeValue(forKey: owner) != nil else { return }
            logger.debug("media player \(owner) left the bus during the call")
        }
    }

    /// A player we paused started or stopped: the user did it, so it is theirs again.
    private func statusChanged(_ message: Message) {
        guard let owner = message.sender, paused[owner] != nil, let arguments = try? message.arguments(), arguments.count >= 2,
              case .string(let status)? = arguments[1].vardict?["PlaybackStatus"], status == "Playing" || status == "Stopped" else { return }
        paused[owner] = nil
        logger.info("media player \(owner) is \(status.lowercased()) by the user; it will not be resumed after the call")
    }
}
