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
    private var lastFound: (path: ObjectPath, uuid: UUID)?

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
            objects[call.uuid] = try context.objects.export(Telephony1.callPath(call.uuid.apiString), [callInterface])
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

    /// The Call interface, made once for every call's object: each handler finds its call from the
    /// object's path. Made for each call, it was a fifth of the instructions of exporting one (issue 55).
    private lazy var callInterface: Interface = {
        typealias API = Telephony1.Call
        return Interface(API.interface) {
            method(API.answer) { calls, call in _ = try calls.controller.request([.answer(try Self.uuid(of: call))], from: call.sender) }
            method(API.end) { calls, call in _ = try calls.controller.request([.end(try Self.uuid(of: call))], from: call.sender) }
            method(API.setHeld) { calls, call, onHold in
                _ = try calls.controller.request([.setHeld(try Self.uuid(of: call), onHold)], from: call.sender)
            }
            method(API.setMuted) { calls, call, muted in
                _ = try calls.controller.request([.setMuted(try Self.uuid(of: call), muted)], from: call.sender)
            }
            method(API.silence) { calls, call in try calls.context.switchboard.silence(try Self.uuid(of: call)) }
            method(API.playDTMF) { calls, call, digits in
                _ = try calls.controller.request([.playDTMF(try Self.uuid(of: call), digits: digits, type: .singleTone)], from: call.sender)
            }
            // Read from the record last published, each field as it goes on the wire. Only
            // CallerName depends on who reads it: a sandboxed reader (only ever the app that owns
            // the call) reads back no name of the user's. The others are the same for every reader,
            // so a signal that changes only them is built once for all its recipients.
            for field in Telephony1.CallRecord.fields {
                if field.name == API.callerName.name {
                    property(field.name, field.signature, variesByReader: true) { calls, path, reader in
                        let uuid = try calls.call(at: path)
                        let record = try calls.record(uuid)
                        return reader?.app.isSandboxed == true ? .string(calls.namesForOwningApp[uuid] ?? "") : field.encode(record)
                    }
                } else {
                    property(field.name, field.signature, variesByReader: false) { calls, path, _ in field.encode(try calls.record(try calls.call(at: path))) }
                }
            }
        }
    }()

    /// The call whose object is at `path`; the last one found is kept, as InterfacesAdded and
    /// GetAll read every property of one object in turn.
    private func call(at path: ObjectPath) throws -> UUID {
        if let lastFound, lastFound.path == path { return lastFound.uuid }
        let uuid = try Self.uuid(at: path)
        lastFound = (path, uuid)
        return uuid
    }

    private static func uuid(of call: MethodCall) throws -> UUID {
        try uuid(at: call.message.path ?? .root)
    }

    private static func uuid(at path: ObjectPath) throws -> UUID {
        guard let text = Telephony1.callUUID(from: path), let uuid = UUID(apiString: text) else {
            throw DBusError.unknownObject("no call at \(path)")
        }
        return uuid
    }
}
