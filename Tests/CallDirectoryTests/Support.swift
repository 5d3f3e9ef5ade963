import Foundation
@testable import CallDirectory

/// A fresh folder under the temporary directory, removed at deinit.
final class TemporaryFolder {
    let path: String

    init() {
        path = NSTemporaryDirectory() + "CallDirectoryTests-\(UUID().uuidString)"
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }
}

extension Directory {
    /// A directory from a complete update.
    static func make(blocking: [Int64] = [], identification: [(Int64, String)] = []) throws -> Directory {
        let update = DirectoryUpdate(kind: .complete)
        try update.addBlocking(blocking)
        try update.addIdentification(identification.map(\.0), labels: identification.map(\.1))
        return try Directory.empty.applying(update)
    }

    var identificationPairs: [String] { identificationEntries.map { "\($0.number)=\($0.label)" } }
}

func seconds(_ body: () throws -> Void) rethrows -> Double {
    let start = DispatchTime.now().uptimeNanoseconds
    try body()
    return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
}

func errorName(_ body: () throws -> Void) -> String? {
    do {
        try body()
        return nil
    } catch let error as DirectoryError {
        return error.name
    } catch {
        return "\(error)"
    }
}

extension DirectoryStore {
    /// The two halves of `identify(number:)`, the one lookup the service makes, as the tests ask them.
    func isBlocked(_ number: Int64) -> Bool { identify(number: number).blocked }
    func label(for number: Int64) -> String? { identify(number: number).label }
}
