/// Who a call is with: a phone number, an email address, or any other
/// identifier the app understands (CallKit's `CXHandle`).
public struct CXHandle: Hashable, Sendable, CustomStringConvertible {
    /// The kinds of handle the service knows.
    public enum HandleType: Int, Hashable, Sendable, CaseIterable {
        case generic = 1
        case phoneNumber = 2
        case emailAddress = 3
    }

    public var type: HandleType
    public var value: String

    public init(type: HandleType, value: String) {
        self.type = type
        self.value = value
    }

    /// Whether both handles are of one type and value (CallKit's `isEqual(to:)`).
    public func isEqual(to handle: CXHandle) -> Bool { self == handle }

    public var description: String { "\(type.apiName):\(value)" }
}
