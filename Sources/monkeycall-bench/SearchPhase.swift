import CallHistory
import DBus
import Foundation
import MonkeyCallAPI
import Synchronization

/// The system's search at scale (issue 43): a daemon with a vCard folder of 10,000 contacts, a
/// history of 10,000 calls from as many people and 100 favorites;
/// - `GetInitialResultSet` (GNOME Shell), `Match` (KRunner), `GetResultMetas` of five results and
///   `AddressBook.Search` (50), each against Ping in interleaved rounds (target: ≤ 3× Ping);
/// - its RSS idle before any search and idle after all of them and a burst of typing (each key a
///   search that is never waited for, as the shell cancels the last one): what search keeps.
enum SearchPhase {
    struct Result {
        let contacts: Int, recents: Int, favorites: Int
        let initial: Samples, initialPing: Samples
        let match: Samples, matchPing: Samples
        let metas: Samples, metasPing: Samples
        let book: Samples, bookPing: Samples
        /// The first search after the start: the indexes are made then.
        let firstSearch: Double
        let idleBefore: Int, idleAfter: Int, afterTyping: Int, afterTypingAgain: Int
        let typed: Int
    }

    static let firsts = ["Ada", "Grace", "Alan", "Zoë", "Łukasz", "Marie", "Søren", "Nguyễn", "Kwame", "Priya", "Hiroshi", "Olu", "Jean-Luc",
                         "Siobhán", "Mateo", "Aiko", "Fatima", "Björn", "Chloé", "Dmitri"]
    static let lasts = ["Lovelace", "Hopper", "Turing", "Ångström", "Kowalski", "Curie", "Kierkegaard", "Van Thi", "Mensah", "Sharma",
                        "Tanaka", "Adeyemi", "O'Brien", "García", "Müller", "Novák", "Okafor", "Rossi", "Svensson", "Yılmaz"]

    /// Contact `n`'s name: every first name with every last name, then again with a middle initial.
    static func name(_ n: Int) -> String {
        let pairs = firsts.count * lasts.count
        let middle = n / pairs == 0 ? "" : " \(Character(Unicode.Scalar(UInt8(65 + (n / pairs - 1) % 26)))). "
        return "\(firsts[n % firsts.count])\(middle.isEmpty ? " " : middle)\(lasts[n / firsts.count % lasts.count])"
    }

    static let queries: [[String]] = [["ada"], ["grace", "hop"], ["zoe"], ["mull"], ["+44", "7700", "900"], ["07700", "900", "123"],
                                      ["caller", "33"], ["favorite"], ["xyz"], ["0001"], ["ob"], ["svensson", "b"]]

    static func measure(executable: String, options: [String], contacts: Int, recents: Int, favorites: Int, iterations: Int) async throws -> Result {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("monkeycall-bench-search-\(UUID().uuidString.prefix(8))").path
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        for n in 0..<contacts {
            let card = "BEGIN:VCARD\r\nVERSION:3.0\r\nUID:s\(n)\r\nFN:\(name(n))\r\nTEL;TYPE=CELL:+44 7700 \(900_000 + n)\r\nTEL;TYPE=HOME:020 7946 \(String(format: "%04d", n % 10_000))\r\nEND:VCARD\r\n"
            try Data(card.utf8).write(to: URL(fileURLWithPath: folder + "/s\(n).vcf"))
        }
        let daemon = try await DaemonUnderTest.start(executable: executable, options: options + ["--contacts", folder, "--recents-limit", "\(recents)"]) { dataHome in
            let history = try CallHistory(path: dataHome.appendingPathComponent("monkeycall/monkeycall.sqlite").path, recentsLimit: recents)
            let now = UInt64(Date().timeIntervalSince1970 * 1e6)
            try history.recordAll((0..<recents).map { index in
                let ended = now - UInt64(recents - index) * 60_000_000
                return RecentCall(callUUID: UUID().uuidString.lowercased(), providerName: "Bench", handle: "+1555\(1_000_000 + index)",
                                  handleType: HandleType.phoneNumber.rawValue, callerName: index % 2 == 0 ? "Caller \(index)" : "", outgoing: index % 3 == 0,
                                  status: .answered, endReason: "", startedAt: ended - 30_000_000, connectedAt: 0, endedAt: ended, hasVideo: false, seen: true)
            })
            for index in 0..<favorites {
                try history.addFavorite(Favorite(handle: "+1555\(2_000_000 + index)", handleType: HandleType.phoneNumber.rawValue, name: "Favorite \(index)", providerName: "Bench"))
            }
        }
        do {
            let result = try await measure(daemon, contacts: contacts, recents: recents, favorites: favorites, iterations: iterations)
            await daemon.stop()
            return result
        } catch {
            let note = daemon.outputNote
            await daemon.stop()
            throw BenchError("\(error)\(note)")
        }
    }

    private static func measure(_ daemon: DaemonUnderTest, contacts: Int, recents: Int, favorites: Int, iterations: Int) async throws -> Result {
        let connection = try Connection(address: daemon.address)
        defer { connection.close() }
        let deadline = ContinuousClock.now + .seconds(300)
        while try await connection.get(Telephony1.AddressBook.count, destination: Telephony1.busName, path: Telephony1.rootPath) < contacts {
            guard ContinuousClock.now < deadline else { throw BenchError("the \(contacts) contacts were not indexed within 300 s") }
            try await Task.sleep(for: .milliseconds(50))
        }
        // An app that calls numbers: each result says it calls.
        let app = try Connection(address: daemon.address)
        defer { app.close() }
        _ = try await app.telephony(Telephony1.Manager.registerProvider, [Telephony1.Key.name: .string("Bench"),
                                                                           Telephony1.Key.supportedHandleTypes: [HandleType.phoneNumber.rawValue].dbusValue])
        try await Task.sleep(for: .seconds(3)) // The index settles; libdispatch lets its start-up threads go.
        let idleBefore = try daemon.residentBytes()

        typealias GNOME = Desktop.SearchProvider2
        let path = Telephony1.searchPath
        let clock = ContinuousClock()
        let started = clock.now
        let ids = try await connection.call(GNOME.getInitialResultSet, destination: Telephony1.busName, path: path, ["ada"])
        let firstSearch = (clock.now - started).microseconds
        guard ids.count == 5 else { throw BenchError("GetInitialResultSet(ada) gave \(ids.count) results, not 5") }

        let ping: @Sendable () async throws -> [DBusValue] = { try await connection.ping(Telephony1.busName) }
        let next = Counter()
        let initial: @Sendable () async throws -> [DBusValue] = {
            [try await connection.call(GNOME.getInitialResultSet, destination: Telephony1.busName, path: path, queries[next.next() % queries.count]).dbusValue]
        }
        let match: @Sendable () async throws -> [DBusValue] = {
            [try await connection.call(Desktop.KRunner1.match, destination: Telephony1.busName, path: Telephony1.runnerPath,
                                       queries[next.next() % queries.count].joined(separator: " ")).dbusValue]
        }
        let metas: @Sendable () async throws -> [DBusValue] = {
            [try await connection.call(GNOME.getResultMetas, destination: Telephony1.busName, path: path, ids).dbusValue]
        }
        let book: @Sendable () async throws -> [DBusValue] = {
            [try await connection.call(Telephony1.AddressBook.search, destination: Telephony1.busName, path: Telephony1.rootPath,
                                       queries[next.next() % queries.count].joined(separator: " "), 50).dbusValue]
        }
        for _ in 0..<max(50, iterations / 10) { _ = try await initial(); _ = try await ping() }
        let (initials, initialPings) = try await RoundTrips.interleaved(iterations: iterations, rounds: 10, initial, ping)
        let (matches, matchPings) = try await RoundTrips.interleaved(iterations: iterations, rounds: 10, match, ping)
        let (metaTimes, metaPings) = try await RoundTrips.interleaved(iterations: iterations, rounds: 10, metas, ping)
        let (books, bookPings) = try await RoundTrips.interleaved(iterations: iterations, rounds: 10, book, ping)
        try await Task.sleep(for: .seconds(3))
        let idleAfter = try daemon.residentBytes()

        // Typing fast: a search per key, none waited for before the next key (the shell cancels the
        // last search at each key: the service answers it empty, unless it was done), 8 in flight; 100 words, twice.
        let words = (0..<100).map { name($0 * 37 % contacts).lowercased() }
        let keys = words.flatMap { word in word.indices.dropFirst().map { String(word[..<$0]).split(separator: " ").map(String.init) } }
        func type() async throws {
            _ = try await mapConcurrently(keys.count, limit: 8) { index in
                try await connection.call(GNOME.getInitialResultSet, destination: Telephony1.busName, path: path, keys[index])
            }
            try await Task.sleep(for: .seconds(3))
        }
        try await type()
        let afterTyping = try daemon.residentBytes()
        try await type()
        let afterTypingAgain = try daemon.residentBytes()
        let typed = keys.count
        return Result(contacts: contacts, recents: recents, favorites: favorites, initial: Samples(initials), initialPing: Samples(initialPings),
                      match: Samples(matches), matchPing: Samples(matchPings), metas: Samples(metaTimes), metasPing: Samples(metaPings),
                      book: Samples(books), bookPing: Samples(bookPings), firstSearch: firstSearch,
                      idleBefore: idleBefore, idleAfter: idleAfter, afterTyping: afterTyping, afterTypingAgain: afterTypingAgain, typed: typed)
    }

    static func render(_ result: Result) -> [String] {
        var table = Table(["the system's search (\(result.contacts) contacts, \(result.recents) Recents, \(result.favorites) favorites)", "count",
                           "median µs", "p99 µs", "Ping median µs", "ratio"])
        for (label, samples, ping) in [("GNOME Shell: GetInitialResultSet (12 queries in turn)", result.initial, result.initialPing),
                                       ("KRunner: Match", result.match, result.matchPing),
                                       ("GNOME Shell: GetResultMetas of 5 results", result.metas, result.metasPing),
                                       ("AddressBook.Search, 50 at most", result.book, result.bookPing)] {
            table.add([label, "\(samples.sorted.count)", fixed(samples.median, 1), fixed(samples.percentile(99), 1), fixed(ping.median, 1),
                       fixed(samples.median / ping.median, 2)])
        }
        var lines = table.render()
        lines.append("(ratio = median / Ping's median in the same interleaved rounds; target <= 3)")
        lines.append("the first search after the start, which makes the indexes: \(fixed(result.firstSearch / 1000, 1)) ms")
        lines.append("RSS, idle: before any search \(mebibytes(result.idleBefore)), after them \(mebibytes(result.idleAfter)) "
                     + "(+\(mebibytes(result.idleAfter - result.idleBefore))), after \(result.typed) searches typed a key at a time (8 in flight) "
                     + "\(mebibytes(result.afterTyping)), after as many again \(mebibytes(result.afterTypingAgain))")
        return lines + [""]
    }
}

/// A counter that any task may take the next number from.
private final class Counter: Sendable {
    private let value = Atomic(0)
    func next() -> Int { value.wrappingAdd(1, ordering: .relaxed).newValue }
}
