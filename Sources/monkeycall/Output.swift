import DBus
import Foundation
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
    static func printJSON(_ value: Any) {
        print(json(value))
    }

    static func json(_ value: Any) -> String {
        guard let data = try? JSONSerialization.data(withJSONObject: value, options: [.sortedKeys, .withoutEscapingSlashes]) else { return "null" }
        return String(decoding: data, as: UTF8.self)
    }

    /// A D-Bus value as JSON: dictionaries become objects, variants their content.
    static func jsonValue(_ value: DBusValue) -> Any {
        switch value {
        case .byte(let v): Int(v)
        case .bool(let v): v
        case .int16(let v): Int(v)
        case .uint16(let v): Int(v)
        case .int32(let v): Int(v)
        case .uint32(let v): Int(v)
        case .int64(let v): v
        case .uint64(let v): v
        case .double(let v): v
        case .string(let v): v
        case .objectPath(let v): v.rawValue
        case .signature(let v): v.rawValue
        case .unixFD(let v): Int(v.rawValue)
        case .array(_, let items): items.map(jsonValue)
        case .dictionary(_, _, let entries):
            entries.reduce(into: [String: Any]()) { result, entry in result[plainText(entry.key)] = jsonValue(entry.value) }
        case .structure(let members): members.map(jsonValue)
        case .variant(let inner): jsonValue(inner)
        }
    }

    static func jsonObject(_ fields: [String: DBusValue]) -> [String: Any] {
        fields.mapValues(jsonValue)
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
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.dateFormat = "yyyy-MM-dd HH:mm"
        return formatter.string(from: Date(timeIntervalSince1970: Double(micros) / 1e6))
    }

    /// A call's length: `0:42`, `1:02:03`.
    static func duration(seconds: UInt64) -> String {
        let (hours, minutes, rest) = (seconds / 3600, seconds / 60 % 60, seconds % 60)
        let tail = String(format: "%02d", Int(rest))
        return hours > 0 ? "\(hours):\(String(format: "%02d", Int(minutes))):\(tail)" : "\(minutes):\(tail)"
    }
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
            if Output.toTerminal { Swift.print(empty) } else { FileHandle.standardError.write(Data((empty + "\n").utf8)) }
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
            Swift.print(padded.joined(separator: "  ").trimmingCharacters(in: .whitespaces))
        }
    }

    private static func width(_ text: String) -> Int { Localization.terminalWidth(of: text) }
}
