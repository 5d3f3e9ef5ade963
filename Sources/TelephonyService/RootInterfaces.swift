import DBus
import MonkeyCallAPI
import Foundation
import TelephonyCore

extension TelephonyService {
    func managerInterface() -> Interface {
        Interface(Telephony1.Interface.manager) {
            Method("RegisterProvider", in: ["configuration": "a{sv}"], out: ["provider": "o"]) { [weak self] call in
                guard let self else { throw TelephonyService.stopping }
                let configuration = try Decode.configuration(try call.decode([String: DBusValue].self))
                let sender = call.sender
                if ownerWatches[sender] == nil {
                    ownerWatches[sender] = connection.watchVanishing(of: sender) { [weak self] in
                        guard let self else { return }
                        logger.info("connection \(sender) left the bus; its providers go with it")
                        switchboard.ownerVanished(sender)
                    }
                }
                let provider = try switchboard.registerProvider(owner: sender, configuration: configuration)
                logger.info("provider \(provider.id) '\(provider.name)' registered by \(sender)")
                // The reply first, so that the app knows its path before DidBegin arrives.
                call.reply([.objectPath(Telephony1.providerPath(provider.id.rawValue))])
                emitToProvider(provider.id, "DidBegin", [])
                return .later
            }
            Method("OpenURL", in: ["url": "s"], out: ["call_uuid": "s"]) { [weak self] call in
                guard let self else { throw TelephonyService.stopping }
                return .values([.string(try openURL(try call.decode(String.self), from: call.sender))])
            }
            Property("Version", "s") { .string(Telephony1.version) }
            screeningProperties()
        }
    }

    /// A link becomes a start action at the app that handles its scheme.
    func openURL(_ url: String, from requester: String) throws -> String {
        let link: CallLink
        do {
            link = try CallLink(parsing: url)
        } catch {
            throw DBusError(name: Telephony1.errorPrefix + "InvalidURL", message: error.description)
        }
        guard let provider = switchboard.provider(for: link) else {
            let wanted = link.scheme == "tel" ? "takes phone numbers or declares URLSchemes [\"tel\"]" : "declares URLSchemes [\"\(link.scheme)\"]"
            throw DBusError(name: Telephony1.errorPrefix + "NoProvider", message: "no app for \(link.scheme): links is running (none \(wanted))")
        }
        let uuid = UUID()
        _ = try request([.start(uuid, handle: link.handle, video: link.video, provider: provider.id)], from: requester)
        logger.info("link \(link.scheme): to \(provider.name)")
        return uuid.apiString
    }

    func callControllerInterface() -> Interface {
        Interface(Telephony1.Interface.callController) {
            Method("RequestTransaction", in: ["actions": "a(sa{sv})"], out: ["transaction_uuid": "s"]) { [weak self] call in
                guard let self else { throw TelephonyService.stopping }
                guard case .array(_, let items)? = call.arguments.first else { return .values([]) }
                var requests: [ActionRequest] = []
                for item in items {
                    guard case .structure(let members) = item, members.count == 2, case .string(let kind) = members[0],
                          let args = members[1].vardict else { throw DBusError.invalidArgs("malformed action") }
                    requests.append(try Decode.action(kind: kind, args))
                }
                return .values([.string(try request(requests, from: call.sender))])
            }
            Method("StartCall", in: ["handle": "s", "options": "a{sv}"], out: ["call_uuid": "s", "transaction_uuid": "s"]) { [weak self] call in
                guard let self else { throw TelephonyService.stopping }
                let (handle, options) = try call.decode(String.self, [String: DBusValue].self)
                var args = options
                args["Handle"] = .string(handle)
                if args["CallUUID"] == nil { args["CallUUID"] = .string(UUID().apiString) }
                let start = try Decode.action(kind: "start", args)
                let transaction = try request([start], from: call.sender)
                return .values([.string(start.callUUID.apiString), .string(transaction)])
            }
            Method("AnswerCall", in: ["call_uuid": "s"], out: ["transaction_uuid": "s"]) { [weak self] call in
                guard let self else { throw TelephonyService.stopping }
                return .values([.string(try request([.answer(try Decode.uuid(try call.decode(String.self)))], from: call.sender))])
            }
            Method("EndCall", in: ["call_uuid": "s"], out: ["transaction_uuid": "s"]) { [weak self] call in
                guard let self else { throw TelephonyService.stopping }
                return .values([.string(try request([.end(try Decode.uuid(try call.decode(String.self)))], from: call.sender))])
            }
            Method("SetHeld", in: ["call_uuid": "s", "on_hold": "b"], out: ["transaction_uuid": "s"]) { [weak self] call in
                guard let self else { throw TelephonyService.stopping }
                let (uuid, onHold) = try call.decode(String.self, Bool.self)
                return .values([.string(try request([.setHeld(try Decode.uuid(uuid), onHold)], from: call.sender))])
            }
            Method("SetMuted", in: ["call_uuid": "s", "muted": "b"], out: ["transaction_uuid": "s"]) { [weak self] call in
                guard let self else { throw TelephonyService.stopping }
                let (uuid, muted) = try call.decode(String.self, Bool.self)
                return .values([.string(try request([.setMuted(try Decode.uuid(uuid), muted)], from: call.sender))])
            }
            Method("SetGroup", in: ["call_uuid": "s", "group_with": "s"], out: ["transaction_uuid": "s"]) { [weak self] call in
                guard let self else { throw TelephonyService.stopping }
                let (uuid, other) = try call.decode(String.self, String.self)
                let action = try Decode.action(kind: "set-group", ["CallUUID": .string(uuid), "GroupWith": .string(other)])
                return .values([.string(try request([action], from: call.sender))])
            }
            Method("PlayDTMF", in: ["call_uuid": "s", "digits": "s", "type": "s"], out: ["transaction_uuid": "s"]) { [weak self] call in
                guard let self else { throw TelephonyService.stopping }
                let (uuid, digits, type) = try call.decode(String.self, String.self, String.self)
                let action = try Decode.action(kind: "play-dtmf", ["CallUUID": .string(uuid), "Digits": .string(digits), "Type": .string(type)])
                return .values([.string(try request([action], from: call.sender))])
            }
            Signal("TransactionCompleted", ["transaction_uuid": "s", "success": "b", "error_name": "s", "error_message": "s"])
        }
    }
}
