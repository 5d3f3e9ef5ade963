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
    func owned(_ id: ProviderID, by call: MethodCall) throws -> ProviderID {
        guard let provider = switchboard.provider(id), provider.owner == call.sender else {
            throw DBusError.accessDenied("only the connection that registered provider \(id) may call \(call.name)")
        }
        return id
    }

    /// Refuses a call the user does not want to ring, and records it.
    func screen(_ uuid: UUID, _ update: CallUpdate, from provider: Provider) throws(TelephonyError) {
        guard let handle = update.handle else { return }
        let favorite = favoriteNames[handle.value]
        let verdict = screening.screen(handle.value, isFavorite: favorite != nil, isKnown: history?.knows(handle: handle.value) == true,
                                       now: switchboard.clock.now)
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

    func endReason(_ text: String) throws -> EndReason {
        guard let reason = EndReason(rawValue: text) else {
            throw DBusError.invalidArgs("end reason '\(text.prefix(64))' is not one of \(EndReason.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        return reason
    }

    func providerInterface(_ provider: Provider) -> Interface {
        typealias API = Telephony1.Provider
        let id = provider.id
        return Interface(API.interface) {
            method(API.reportNewIncomingCall) { service, call, uuidText, fields in
                let provider = try service.owned(id, by: call)
                let uuid = try Decode.uuid(uuidText)
                let update = try Decode.update(fields)
                let reported = try service.switchboard.reportNewIncomingCall(provider: provider, uuid: uuid, update: update) { provider throws(TelephonyError) in
                    try service.screen(uuid, update, from: provider)
                }
                return Telephony1.callPath(reported.uuid.apiString)
            }
            method(API.reportCallUpdated) { service, call, uuid, update in
                try service.switchboard.reportCallUpdated(provider: try service.owned(id, by: call), uuid: try Decode.uuid(uuid), update: try Decode.update(update))
            }
            method(API.reportCallEnded) { service, call, uuid, reason, at in
                try service.switchboard.reportCallEnded(provider: try service.owned(id, by: call), uuid: try Decode.uuid(uuid),
                                                        reason: try service.endReason(reason), at: at)
            }
            method(API.reportOutgoingCallStartedConnecting) { service, call, uuid, at in
                try service.switchboard.reportOutgoingCallStartedConnecting(provider: try service.owned(id, by: call), uuid: try Decode.uuid(uuid), at: at)
            }
            method(API.reportOutgoingCallConnected) { service, call, uuid, at in
                try service.switchboard.reportOutgoingCallConnected(provider: try service.owned(id, by: call), uuid: try Decode.uuid(uuid), at: at)
            }
            method(API.fulfillAction) { service, call, action, info in
                let provider = try service.owned(id, by: call)
                let at = try VarDict(info, context: "info").get(Telephony1.Key.date, default: UInt64(0))
                try service.switchboard.fulfillAction(provider: provider, action: try Decode.uuid(action, "action UUID"), at: at)
            }
            method(API.failAction) { service, call, action, info in
                let provider = try service.owned(id, by: call)
                _ = try VarDict(info, context: "info").get(Telephony1.Key.date, as: UInt64.self)
                try service.switchboard.failAction(provider: provider, action: try Decode.uuid(action, "action UUID"))
            }
            method(API.beginCallDirectoryUpdate) { service, call, incremental in
                let id = try service.owned(id, by: call)
                guard let provider = service.switchboard.provider(id) else { throw DBusError.unknownObject("provider \(id) is gone") }
                return try service.beginDirectoryUpdate(provider, incremental: incremental)
            }
            method(API.invalidate) { service, call in
                service.switchboard.invalidateProvider(try service.owned(id, by: call))
            }
            Signal(API.didBegin)
            Signal(API.performAction)
            Signal(API.timedOutPerformingAction)
            Signal(API.didReset)
            Signal(API.didActivateAudioSession)
            Signal(API.didDeactivateAudioSession)
            Property(API.name) { provider.configuration.name }
            Property(API.owner) { provider.owner }
            Property(API.appId) { provider.appID }
            Property(API.configuration) { Encode.configuration(provider.configuration) }
            property(API.calls) { service in service.switchboard.calls(of: id).map { Telephony1.callPath($0.uuid.apiString) } }
        }
    }
}
