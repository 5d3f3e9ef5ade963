import FoundationEssentials

/// A JSON document as the CLI prints it (`--json`): what the service's D-Bus values become.
/// Encoded by FoundationEssentials' JSONEncoder (JSONSerialization is not in FoundationEssentials).
enum JSON: Encodable, Equatable, ExpressibleByStringLiteral, ExpressibleByDictionaryLiteral {
    case string(String)
    case integer(Int64)
    case unsigned(UInt64)
    case double(Double)
    case bool(Bool)
    case array([JSON])
    case object([String: JSON])

    init(stringLiteral value: String) { self = .string(value) }
    init(dictionaryLiteral elements: (String, JSON)...) { self = .object(Dictionary(elements) { _, last in last }) }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .string(let value): try container.encode(value)
        case .integer(let value): try container.encode(value)
        case .unsigned(let value): try container.encode(value)
        case .double(let value): try container.encode(value)
        case .bool(let value): try container.encode(value)
        case .array(let items): try container.encode(items)
        case .object(let members): try container.encode(members)
        }
    }

    /// The document as one line, keys sorted, slashes as they are.
    var text: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard let data = try? encoder.encode(self) else { return "null" }
        return String(decoding: data, as: UTF8.self)
    }
}
