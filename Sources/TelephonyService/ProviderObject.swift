import DBus
import MonkeyCallAPI
import Foundation
import TelephonyCore

extension TelephonyService {
    func exportProvider(_ provider: Provider) {
        providerOwners[provider.id] = provider.owner
        do {
            providerObjects[provider.id] = try connection.export(Telephony1.providerPath(provider.id.rawValue), [providerInterface(provider)])
        } catch {
            logger.error("cannot export provider \(provider.id): \(error)")
        }
    }

    /// Only the connection that registered the provider may act as it.
    private func owned(_ id: ProviderID, by call: MethodCall) throws -> ProviderID {
        guard let provider = switchboard.provider(id), provider.owner == call.sender else {
            throw DBusError.accessDenied("only the connection that registered provider \(id) may call \(call.name)")
        }
        return id
    }

    /// Refuses a call the user does not want to ring, and records it.
    private func screen(_ uuid: UUID, _ update: CallUpdate, from provider: Provider) throws(TelephonyError) {
        guard let handle = update.handle else { return }
        let favorite = favoriteNames[handle.value]
        let verdict = screening.screen(handle.value, isFavorite: favorite != nil, isKnown: history?.knows(handle: handle.value) == true,
                                       now: UInt64(Date().timeIntervalSince1970 * 1_000_000))
        let name = update.localizedCallerName ?? favorite ?? screening.label(for: handle.value) ?? ""
        switch verdict {
        case .ring:
            return
        case .blocked:
            recordRefused(uuid, provider: provider, handle: handle, callerName: name, status: .blocked)
            throw TelephonyError.filteredByBlockList
        case .filtered:
            recordRefused(uuid, provider: provider, handle: handle, callerName: name, status: .filtered)
            throw TelephonyError.filteredByDoNotDisturb
        case .silenced:
            recordRefused(uuid, provider: provider, handle: handle, callerName: name, status: .missed)
            throw TelephonyError.filteredByDoNotDisturb
        }
    }

    private func endReason(_ text: String) throws -> EndReason {
        guard let reason = EndReason(rawValue: text) else {
            throw DBusError.invalidArgs("end reason '\(text.prefix(64))' is not one of \(EndReason.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        return reason
    }

    func providerInterface(_ provider: Provider) -> Interface {
        let id = provider.id
        return Interface(Telephony1.Interface.provider) {
            Method("ReportNewIncomingCall", in: ["call_uuid": "s", "update": "a{sv}"], out: ["call": "o"]) { [weak self] call in
                guard let self else { throw TelephonyService.stopping }
                let provider = try owned(id, by: call)
                let (uuidText, fields) = try call.decode(String.self, [String: DBusValue].self)
                let uuid = try Decode.uuid(uuidText)
                let update = try Decode.update(fields)
                let reported = try switchboard.reportNewIncomingCall(provider: provider, uuid: uuid, update: update) { provider throws(TelephonyError) in
                    try screen(uuid, update, from: provider)
                }
                return .values([.objectPath(Telephony1.callPath(reported.uuid.apiString))])
            }
            Method("ReportCallUpdated", in: ["call_uuid": "s", "update": "a{sv}"]) { [weak self] call in
                guard let self else { throw TelephonyService.stopping }
                let provider = try owned(id, by: call)
                let (uuid, update) = try call.decode(String.self, [String: DBusValue].self)
                try switchboard.reportCallUpdated(provider: provider, uuid: try Decode.uuid(uuid), update: try Decode.update(update))
                return .empty
            }
            Method("ReportCallEnded", in: ["call_uuid": "s", "reason": "s", "ended_at": "t"]) { [weak self] call in
                guard let self else { throw TelephonyService.stopping }
                let provider = try owned(id, by: call)
                let (uuid, reason, at) = try call.decode(String.self, String.self, UInt64.self)
                try switchboard.reportCallEnded(provider: provider, uuid: try Decode.uuid(uuid), reason: try endReason(reason), at: at)
                return .empty
            }
            Method("ReportOutgoingCallStartedConnecting", in: ["call_uuid": "s", "at": "t"]) { [weak self] call in
                guard let self else { throw TelephonyService.stopping }
                let provider = try owned(id, by: call)
                let (uuid, at) = try call.decode(String.self, UInt64.self)
                try switchboard.reportOutgoingCallStartedConnecting(provider: provider, uuid: try Decode.uuid(uuid), at: at)
                return .empty
            }
            Method("ReportOutgoingCallConnected", in: ["call_uuid": "s", "at": "t"]) { [weak self] call in
                guard let self else { throw TelephonyService.stopping }
                let provider = try owned(id, by: call)
                let (uuid, at) = try call.decode(String.self, UInt64.self)
                try switchboard.reportOutgoingCallConnected(provider: provider, uuid: try Decode.uuid(uuid), at: at)
                return .empty
            }
            Method("FulfillAction", in: ["action_uuid": "s", "info": "a{sv}"]) { [weak self] call in
                guard let self else { throw TelephonyService.stopping }
                let provider = try owned(id, by: call)
                let (action, info) = try call.decode(String.self, [String: DBusValue].self)
                let at = try VarDict(info, context: "info").get("Date", default: UInt64(0))
                try switchboard.fulfillAction(provider: provider, action: try Decode.uuid(action, "action UUID"), at: at)
                return .empty
            }
            Method("FailAction", in: ["action_uuid": "s", "info": "a{sv}"]) { [weak self] call in
                guard let self else { throw TelephonyService.stopping }
                let provider = try owned(id, by: call)
                let (action, info) = try call.decode(String.self, [String: DBusValue].self)
                _ = try VarDict(info, context: "info").get("Date", as: UInt64.self)
                try switchboard.failAction(provider: provider, action: try Decode.uuid(action, "action UUID"))
                return .empty
            }
            Method("BeginCallDirectoryUpdate", in: ["incremental": "b"], out: ["update": "o"]) { [weak self] call in
                guard let self else { throw TelephonyService.stopping }
                let id = try owned(id, by: call)
                guard let provider = switchboard.provider(id) else { throw DBusError.unknownObject("provider \(id) is gone") }
                return .values([.objectPath(try beginDirectoryUpdate(provider, incremental: try call.decode(Bool.self)))])
            }
            Method("Invalidate") { [weak self] call in
                guard let self else { throw TelephonyService.stopping }
                switchboard.invalidateProvider(try owned(id, by: call))
                return .empty
            }
            Signal("DidBegin")
            Signal("PerformAction", ["action_uuid": "s", "kind": "s", "call_uuid": "s", "args": "a{sv}"])
            Signal("TimedOutPerformingAction", ["action_uuid": "s", "kind": "s", "call_uuid": "s"])
            Signal("DidReset")
            Signal("DidActivateAudioSession")
            Signal("DidDeactivateAudioSession")
            Property("Name", "s") { .string(provider.configuration.name) }
            Property("Owner", "s") { .string(provider.owner) }
            Property("Configuration", "a{sv}") { Encode.configuration(provider.configuration) }
            Property("Calls", "ao") { [weak self] in
                guard let self else { throw TelephonyService.stopping }
                return switchboard.calls(of: id).map { Telephony1.callPath($0.uuid.apiString) }.dbusValue
            }
        }
    }
}
