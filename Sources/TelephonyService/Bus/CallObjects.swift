import DBus
import FoundationEssentials
import MonkeyCallAPI
import PeerIdentity
import TelephonyCore

/// One object per live call (`/Call/<uuid>`): its properties are read from the record the call
/// last published (`Telephony1.CallRecord`), and each change is announced as the fields that
/// differ from it; its methods are shortcuts through the call controller.
@TelephonyActor
final class CallObjects: ServiceObject, SwitchboardObserver {
    private let context: ServiceContext
    private let controller: CallControllerInterface
    /// What each live call last published: property reads and change diffs use it as it is.
    private var published: [UUID: Telephony1.CallRecord] = [:]
    /// The `CallerName` a sandboxed app reads back of its own call (`ServiceContext.callerNameForOwningApp`);
    /// none for a host app's call, which no sandboxed app can read.
    private var namesForOwningApp: [UUID: String] = [:]
    private var objects: [UUID: ExportedObject] = [:]

    init(context: ServiceContext, controller: CallControllerInterface) {
        self.context = context
        self.controller = controller
    }

    func observe(_ event: SwitchboardEvent) {
        switch event {
        case .callAdded(let call):
            published[call.uuid] = Encode.record(of: call)
            namesForOwningApp[call.uuid] = nameForOwningApp(of: call)
            export(call)
        case .callChanged(let call):
            let after = Encode.record(of: call)
            let before = published.updateValue(after, forKey: call.uuid)
            var changed = Set((before.map { after.changedFields(from: $0) } ?? Telephony1.CallRecord.fields).map(\.name))
            let ownersName = nameForOwningApp(of: call)
            if namesForOwningApp[call.uuid] != ownersName {
                namesForOwningApp[call.uuid] = ownersName
                changed.insert(Telephony1.Call.callerName.name)
            }
            objects[call.uuid]?.propertiesChanged(changed.sorted(), on: Telephony1.Call.interface)
        case .callRemoved(let call):
            published[call.uuid] = nil
            namesForOwningApp[call.uuid] = nil
            objects[call.uuid] = nil
            context.objects.unexport(Telephony1.callPath(call.uuid.apiString))
        default:
            break
        }
    }

    private func export(_ call: Call) {
        do {
            objects[call.uuid] = try context.objects.export(Telephony1.callPath(call.uuid.apiString), [callInterface(call.uuid)])
        } catch {
            context.logger.error("cannot export call \(call.uuid.apiString): \(error)")
        }
    }

    /// The name a sandboxed owner reads back, worked out (a directory lookup) only for a sandboxed app's call.
    private func nameForOwningApp(of call: Call) -> String? {
        guard context.switchboard.provider(call.provider)?.isSandboxed == true else { return nil }
        return context.callerNameForOwningApp(of: call)
    }

    /// What the call last published, while it lives.
    private func record(_ uuid: UUID) throws -> Telephony1.CallRecord {
        guard let record = published[uuid] else { throw DBusError.unknownObject("call \(uuid.apiString) has ended") }
        return record
    }

    private func callInterface(_ uuid: UUID) -> Interface {
        typealias API = Telephony1.Call
        return Interface(API.interface) {
            method(API.answer) { calls, call in _ = try calls.controller.request([.answer(uuid)], from: call.sender) }
            method(API.end) { calls, call in _ = try calls.controller.request([.end(uuid)], from: call.sender) }
            method(API.setHeld) { calls, call, onHold in _ = try calls.controller.request([.setHeld(uuid, onHold)], from: call.sender) }
            method(API.setMuted) { calls, call, muted in _ = try calls.controller.request([.setMuted(uuid, muted)], from: call.sender) }
            method(API.silence) { calls, _ in try calls.context.switchboard.silence(uuid) }
            method(API.playDTMF) { calls, call, digits in
                _ = try calls.controller.request([.playDTMF(uuid, digits: digits, type: .singleTone)], from: call.sender)
            }
            // Read from the record last published, each field as it goes on the wire. Only
            // CallerName depends on who reads it: a sandboxed reader (only ever the app that owns
            // the call) reads back no name of the user's. The others are the same for every reader,
            // so a signal that changes only them is built once for all its recipients.
            for field in Telephony1.CallRecord.fields {
                if field.name == API.callerName.name {
                    property(field.name, field.signature) { calls, reader in
                        let record = try calls.record(uuid)
                        return reader?.app.isSandboxed == true ? .string(calls.namesForOwningApp[uuid] ?? "") : field.encode(record)
                    }
                } else {
                    property(field.name, field.signature) { calls in field.encode(try calls.record(uuid)) }
                }
            }
        }
    }
}
