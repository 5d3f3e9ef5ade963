import DBus
import MonkeyCallAPI
import Foundation

/// Start an outgoing call (CallKit's `CXStartCallAction`).
public final class CXStartCallAction: CXCallAction, @unchecked Sendable {
    public var handle: CXHandle
    public var isVideo: Bool = false
    public var contactIdentifier: String?

    public init(call callUUID: UUID, handle: CXHandle) {
        self.handle = handle
        super.init(call: callUUID)
    }

    /// Fulfils the action, noting when the call started.
    public func fulfill(withDateStarted date: Date) { finish(fulfilled: true, at: date) }

    override var apiKind: String { "start" }
    override var apiArguments: [String: DBusValue] {
        var args = super.apiArguments
        args[Telephony1.Key.handle] = .string(handle.value)
        args[Telephony1.Key.handleType] = .string(handle.type.apiName)
        args[Telephony1.Key.video] = .bool(isVideo)
        if let contactIdentifier { args[Telephony1.Key.contactIdentifier] = .string(contactIdentifier) }
        return args
    }
}
