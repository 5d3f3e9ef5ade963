import DBus
import FoundationEssentials
import Glibc
import Localization
import ScreenText

/// What the CLI prints: tables for people, tab-separated lines or one JSON document for programs.
enum Output {
    /// Whether standard output is a terminal: tables get a header and aligned columns there.
    static let toTerminal = isatty(STDOUT_FILENO) != 0

    /// Text from the service (a caller's name, a handle, a label, an app's name) made safe for a
    /// terminal: an ESC sequence in a caller's name must not recolour it, a newline must not fake a row.
    static func clean(_ text: String) -> String { ScreenText.clean(text) }

    /// Prints one JSON document (an array or an object), keys sorted, strings as the service gave them.
    static func printJSON(_ value: JSON) {
        print(value.text)
    }

    /// A D-Bus value as JSON: dictionaries become objects, variants their content.
    static func jsonValue(_ value: DBusValue) -> JSON {
        switch value {
        case .byte(let v): .integer(Int64(v))
        case .bool(let v): .bool(v)
        case .int16(let v): .integer(Int64(v))
        case .uint16(let v): .integer(Int64(v))
        case .int32(let v): .integer(Int64(v))
        case .uint32(let v): .integer(Int64(v))
        case .int64(let v): .integer(v)
        case .uint64(let v): .unsigned(v)
        case .double(let v): .double(v)
        case .string(let v): .string(v)
        case .objectPath(let v): .string(v.rawValue)
        case .signature(let v): .string(v.rawValue)
        case .unixFD(let v): .integer(Int64(v.rawValue))
        case .array(_, let items): .array(items.map(jsonValue))
        case .dictionary(_, _, let entries):
            .object(entries.reduce(into: [String: JSON]()) { result, entry in result[plainText(entry.key)] = jsonValue(entry.value) })
        case .structure(let members): .array(members.map(jsonValue))
        case .variant(let inner): jsonValue(inner)
        }
    }

    static func jsonObject(_ fields: [String: DBusValue]) -> JSON {
        .object(fields.mapValues(jsonValue))
    }

    /// A D-Bus value for a person: strings as they are (cleaned), booleans yes/no, lists joined.
    static func plainText(_ value: DBusValue) -> String {
        switch value {
        case .string(let v): clean(v)
        case .objectPath(let v): v.rawValue
        case .signature(let v): v.rawValue
        case .bool(let v): v ? "yes" : "no"
        case .variant(let inner): plainText(inner)
        case .array(_, let items): items.map(plainText).joined(separator: ",")
        case .structure(let members): members.map(plainText).joined(separator: ",")
        case .dictionary(_, _, let entries): entries.map { "\(plainText($0.key))=\(plainText($0.value))" }.joined(separator: ",")
        default: "\(value.unwrappedVariant)"
        }
    }

    /// A time from the service (µs since 1970) as plain ASCII in local time: `2026-11-22 20:58`.
    static func time(micros: UInt64) -> String {
        guard micros > 0 else { return "" }
        return LocalTime(microseconds: micros).formatted("%Y-%m-%d %H:%M")
    }

    /// A call's length: `0:42`, `1:02:03`.
    static func duration(seconds: UInt64) -> String { LocalTime.duration(seconds: seconds) }
}

/// Rows under named columns: aligned with a header on a terminal, tab-separated without one when piped.
struct Table {
    let columns: [String]
    var rows: [[String]] = []

    init(_ columns: [String]) { self.columns = columns }

    /// Adds a row; every cell is cleaned, so no cell can hold a tab or a line break.
    mutating func add(_ cells: [String]) {
        rows.append(cells.map(Output.clean))
    }

    /// `empty`: said instead when there are no rows; on standard error when piped, so that a
    /// program reading the rows reads none.
    func print(orWhenEmpty empty: String) {
        guard !rows.isEmpty else {
            if Output.toTerminal { Swift.print(empty) } else { StandardStream.error.write(empty + "\n") }
            return
        }
        guard Output.toTerminal else {
            for row in rows { Swift.print(row.joined(separator: "\t")) }
            return
        }
        let lines = [columns] + rows
        let widths = columns.indices.map { column in lines.map { Self.width($0[column]) }.max() ?? 0 }
        for line in lines {
            let padded = line.enumerated().map { index, cell in
                index == line.count - 1 ? cell : cell + String(repeating: " ", count: widths[index] - Self.width(cell))
            }
            Swift.print(padded.joined(separator: "  ").trimmingWhitespace())
        }
    }

    private static func width(_ text: String) -> Int { Localization.terminalWidth(of: text) }
}
