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
        Interface(Telephony1.Interface.call) {
            Method("Answer") { [weak self] call in
                guard let self else { throw TelephonyService.stopping }
                _ = try request([.answer(uuid)], from: call.sender)
                return .empty
            }
            Method("End") { [weak self] call in
                guard let self else { throw TelephonyService.stopping }
                _ = try request([.end(uuid)], from: call.sender)
                return .empty
            }
            Method("SetHeld", in: ["on_hold": "b"]) { [weak self] call in
                guard let self else { throw TelephonyService.stopping }
                _ = try request([.setHeld(uuid, try call.decode(Bool.self))], from: call.sender)
                return .empty
            }
            Method("SetMuted", in: ["muted": "b"]) { [weak self] call in
                guard let self else { throw TelephonyService.stopping }
                _ = try request([.setMuted(uuid, try call.decode(Bool.self))], from: call.sender)
                return .empty
            }
            Method("PlayDTMF", in: ["digits": "s"]) { [weak self] call in
                guard let self else { throw TelephonyService.stopping }
                _ = try request([.playDTMF(uuid, digits: try call.decode(String.self), type: .singleTone)], from: call.sender)
                return .empty
            }
            for (name, signature) in Encode.callProperties {
                Property(name, signature) { [weak self] in
                    guard let self else { throw TelephonyService.stopping }
                    guard let value = published[uuid]?[name] else {
                        throw DBusError.unknownObject("call \(uuid.apiString) has ended")
                    }
                    return value
                }
            }
        }
    }
}
