import DBus
import MonkeyCallAPI
import Foundation
import TelephonyCore

extension TelephonyService {
    func exportCall(_ call: Call) {
        do {
            callObjects[call.uuid] = try connection.export(Telephony1.callPath(call.uuid.apiString), [callInterface(call.uuid)])
        } catch {
            logger.error("cannot export call \(call.uuid.apiString): \(error)")
        }
    }

    /// A call's properties read from the last published state; its methods
    /// are shortcuts through the call controller.
    func callInterface(_ uuid: UUID) -> Interface {
        typealias API = Telephony1.Call
        return Interface(API.interface) {
            method(API.answer) { service, call in _ = try service.request([.answer(uuid)], from: call.sender) }
            method(API.end) { service, call in _ = try service.request([.end(uuid)], from: call.sender) }
            method(API.setHeld) { service, call, onHold in _ = try service.request([.setHeld(uuid, onHold)], from: call.sender) }
            method(API.setMuted) { service, call, muted in _ = try service.request([.setMuted(uuid, muted)], from: call.sender) }
            method(API.playDTMF) { service, call, digits in
                _ = try service.request([.playDTMF(uuid, digits: digits, type: .singleTone)], from: call.sender)
            }
            // Read as last published (`Encode.properties`), whatever their types.
            for member in API.spec.members where member.kind == .property {
                Property(member.name, member.type!) { [weak self] in
                    guard let self else { throw TelephonyService.stopping }
                    guard let value = published[uuid]?[member.name] else {
                        throw DBusError.unknownObject("call \(uuid.apiString) has ended")
                    }
                    return value
                }
            }
        }
    }
}
