import DBus
import FoundationEssentials
import Localization
import MonkeyCallAPI
import MonkeyCallClient

/// What the call window shows for one call.
public struct CallView: Equatable, Sendable {
    /// Its raw value names the call window's page for it (call-window.ui).
    public enum Phase: String, Equatable, Sendable { case ringing, ongoing, ended }
    public let uuid: String
    public let phase: Phase
    /// The caller's name large, else the number.
    public let title: String
    /// The number (when the title is a name) and the app.
    public let subtitle: String
    /// "Incoming call", "Calling…", "On hold", "Call ended · 0:42"; the running duration otherwise.
    public let status: String
    public let muted: Bool
    public let onHold: Bool
    public let canHold: Bool
    public let canSendDigits: Bool
    public let silenced: Bool
    /// Another call is up while this one rings: Hold & Answer / End & Answer.
    public let otherCallUp: Bool
    /// While this one is up: the other call there is, to switch to or merge with.
    public let other: OtherCall?
}

/// The second call, as the call window shows it under the one it shows.
public struct OtherCall: Equatable, Sendable {
    public let uuid: String
    /// Who, and how that call stands: "Bob Example · On hold".
    public let summary: String
    /// Already in one call group with the shown call: nothing to switch to or merge.
    public let merged: Bool
    /// The shown call can be put on hold (or is) to take this one.
    public let canSwitch: Bool
    /// Both calls are one app's and both can be grouped (CallKit groups only a provider's own calls).
    public let canMerge: Bool
}

/// The calls there are, and the one the call window shows.
public final class CallsModel: ModelPart {
    public private(set) var calls: [String: CallSnapshot] = [:]
    /// The call the window shows, while it shows one.
    public private(set) var shownUUID: String?
    /// The last state of the shown call once it ended (the call object is gone by then).
    private var endedSnapshot: CallSnapshot?
    /// Asks the window to show itself (a call to show arrived).
    public var onShow: () -> Void = {}

    public func load() async {
        await change {
            let now = try await backend.calls()
            calls = Dictionary(now.map { ($0.uuid, $0) }, uniquingKeysWith: { $1 })
        }
    }

    /// Shows `uuid` in the call window (`app.show-call`, or a call the app started).
    public func show(_ uuid: String) {
        shownUUID = uuid.lowercased()
        endedSnapshot = nil
        onShow()
        onChange()
        if calls[uuid.lowercased()] == nil { AppTask.start { await self.load() } }
    }

    /// The window was closed.
    public func hide() {
        shownUUID = nil
        endedSnapshot = nil
    }

    public var anyCallUp: Bool { calls.values.contains { !$0.hasEnded } }

    func added(_ call: CallSnapshot) {
        calls[call.uuid] = call
        onChange()
    }

    func changed(_ path: ObjectPath, _ properties: [String: DBusValue]) {
        guard let uuid = calls.first(where: { $0.value.path == path })?.key else { return }
        calls[uuid]?.properties.merge(properties) { $1 }
        if uuid == shownUUID, calls[uuid]?.hasEnded == true { endedSnapshot = calls[uuid] }
        onChange()
    }

    func removed(_ path: ObjectPath) {
        guard let uuid = calls.first(where: { $0.value.path == path })?.key else { return }
        if uuid == shownUUID { endedSnapshot = calls[uuid] }
        calls[uuid] = nil
        onChange()
    }

    func serviceStopped() {
        if let shownUUID, let call = calls[shownUUID] { endedSnapshot = call }
        calls = [:]
        onChange()
    }

    /// What the window shows now; nil when it shows nothing.
    public func view(now: Date = Date()) -> CallView? {
        guard let uuid = shownUUID, let call = calls[uuid] ?? endedSnapshot else { return nil }
        let ended = call.hasEnded || calls[uuid] == nil
        let handle = Format.clean(call.handle)
        let name = Format.clean(call.callerName)
        let title = name.isEmpty || name == handle ? handle : name
        let app = Format.clean(call.providerName)
        let subtitle = title == handle ? app : tr("%1$s · %2$s", handle, app)
        let phase: CallView.Phase = ended ? .ended : call.state == .ringing ? .ringing : .ongoing
        let nowMicros = UInt64(now.timeIntervalSince1970 * 1_000_000)
        let connected = call.connectedAt
        let elapsed: UInt64 = connected > 0 ? ((ended && call.endedAt > 0 ? call.endedAt : max(nowMicros, connected)) - connected) / 1_000_000 : 0
        let status: String
        switch (phase, call.state) {
        case (.ended, _): status = connected > 0 ? tr("Call ended · %1$s", Format.duration(seconds: elapsed)) : tr("Call ended")
        case (.ringing, _): status = call.outgoing ? tr("Calling…") : tr("Incoming call")
        case (_, .held?): status = tr("On hold")
        case (_, .dialing?), (_, .connecting?): status = tr("Calling…")
        default: status = Format.duration(seconds: elapsed)
        }
        let otherUp = calls.values.contains { $0.uuid != uuid && !$0.hasEnded && $0.state != .ringing }
        return CallView(uuid: uuid, phase: phase, title: title, subtitle: subtitle, status: status, muted: call.muted, onHold: call.onHold,
                        canHold: call.supportsHolding, canSendDigits: call.supportsDTMF, silenced: call.silenced, otherCallUp: otherUp,
                        other: phase == .ongoing ? otherCall(than: call) : nil)
    }

    /// The other call that is up beside `call` (the oldest, when there are several).
    private func otherCall(than call: CallSnapshot) -> OtherCall? {
        let others = calls.values.filter { $0.uuid != call.uuid && !$0.hasEnded && $0.state != .ringing }
        guard let other = others.min(by: { ($0.startedAt, $0.uuid) < ($1.startedAt, $1.uuid) }) else { return nil }
        let handle = Format.clean(other.handle), name = Format.clean(other.callerName)
        let who = name.isEmpty ? handle : name
        let merged = !call.group.isEmpty && call.group == other.group
        let standing = merged ? tr("In this call") : other.onHold ? tr("On hold") : tr("Active")
        return OtherCall(uuid: other.uuid, summary: tr("%1$s · %2$s", who, standing), merged: merged,
                         canSwitch: !merged && (call.onHold || call.supportsHolding),
                         canMerge: !merged && call.supportsGrouping && other.supportsGrouping && call.provider != nil && call.provider == other.provider)
    }

    // MARK: The user's actions

    public func answer() async { await act { try await self.backend.answer($0) } }
    public func decline() async { await act { try await self.backend.end($0) } }
    public func hangUp() async { await act { try await self.backend.end($0) } }
    public func silence() async { await act { try await self.backend.silence($0) } }

    /// Holds every other call that is up, then answers (the service holds it anyway; said here for clarity).
    /// Puts the shown call on hold and takes the other off hold, and shows that one: the two calls
    /// change places, as iOS's "Swap".
    public func switchToOther() async {
        guard let shown = shownUUID, let call = calls[shown], let other = otherCall(than: call), other.canSwitch else { return }
        if !call.onHold {
            do { try await backend.setHeld(shown, true) } catch { return report.error(error) }
        }
        if calls[other.uuid]?.onHold == true {
            do { try await backend.setHeld(other.uuid, false) } catch { report.error(error) }
        }
        show(other.uuid)
    }

    /// Joins the other call to the shown one's group (a conference the app holds).
    public func merge() async {
        guard let shown = shownUUID, let call = calls[shown], let other = otherCall(than: call), other.canMerge else { return }
        do { try await backend.setGroup(other.uuid, with: shown) } catch { report.error(error) }
    }

    /// Holds the calls that are up and answers the one shown, in one transaction (as CallKit's
    /// CXSetHeldCallAction and CXAnswerCallAction in one CXTransaction): both happen, or neither.
    /// A call that cannot be held (it does not support holding, or is still dialling) is the
    /// service's to end, as it ends any call that would stay up beside the one answered.
    public func holdAndAnswer() async {
        guard let shown = shownUUID else { return }
        let held = callsUp.filter { $0.state == .active && $0.supportsHolding }.map { CallAction.setHeld($0.uuid, true) }
        await request(held + [.answer(shown)])
    }

    /// Ends the calls that are up and answers the one shown, in one transaction. A call already
    /// on hold stays, as iOS's "End Active & Accept" leaves it: the person put it aside, and did
    /// not ask to end it.
    public func endAndAnswer() async {
        guard let shown = shownUUID else { return }
        await request(callsUp.map { CallAction.end($0.uuid) } + [.answer(shown)])
    }

    private func request(_ actions: [CallAction]) async {
        do { try await backend.requestTransaction(actions) } catch { report.error(error) }
    }

    /// The other calls that are up (answered or dialled, not on hold, not ended).
    private var callsUp: [CallSnapshot] {
        calls.values.filter { $0.uuid != shownUUID && !$0.hasEnded && $0.state != .ringing && !$0.onHold }
    }

    public func toggleMute() async {
        guard let uuid = shownUUID, let call = calls[uuid] else { return }
        await act { try await self.backend.setMuted($0, !call.muted) }
    }

    public func toggleHold() async {
        guard let uuid = shownUUID, let call = calls[uuid] else { return }
        await act { try await self.backend.setHeld($0, !call.onHold) }
    }

    public func sendDigits(_ digits: String) async { await act { try await self.backend.playDTMF($0, digits) } }

    private func act(_ action: (String) async throws -> Void) async {
        guard let uuid = shownUUID else { return }
        do { try await action(uuid) } catch { report.error(error) }
    }
}
