import CallHistory
import DBus
import FoundationEssentials
import MonkeyCallAPI
import Synchronization
import TelephonyCore

/// Recents and Favorites on D-Bus (`RecentsInterface`, `FavoritesInterface`): their methods run
/// on the database's executor and answer from there or back on the service queue. Without a
/// database the service still handles calls, and these interfaces say why they cannot answer.
@TelephonyActor
protocol HistoryInterface: ServiceObject {
    var context: ServiceContext { get }
    /// Places the calls of `CallBack` and `Favorites.Call`.
    var controller: CallControllerInterface { get }
}

extension HistoryInterface {
    nonisolated static func id(_ value: UInt64, _ what: String) throws -> Int64 {
        guard let id = Int64(exactly: value), id > 0 else { throw DBusError.invalidArgs("\(value) is not a \(what) id") }
        return id
    }

    /// `CallBack` and `Favorites.Call`: what to call (handle, handle type, app) is read on the
    /// database's executor, then called through the app that placed or saved it.
    func call(_ reply: Reply<String>, _ id: UInt64, _ what: String,
              reading target: @escaping @Sendable (CallHistory, Int64) throws -> (handle: String, type: String, provider: String)?) throws {
        let id = try Self.id(id, what)
        _ = try answer(reply.call, reading: { try target($0, id) }) { owner, target in
            guard let target else { throw DBusError.invalidArgs("no \(what) has id \(id)") }
            let handle = Handle(type: HandleType(rawValue: target.type) ?? .generic, value: target.handle)
            return [.string(try owner.controller.startCall(to: handle, through: target.provider, from: reply.call.sender))]
        }
    }

    /// Runs `body` on the database's executor, then `reply` on the actor with its
    /// result, and answers `call` with that (or with the error either throws). A database that
    /// fails (a read-only or full disk, another program's lock held too long) gets the same clear
    /// error as one that could not be opened.
    func answer<T: Sendable>(_ call: MethodCall, reading body: @escaping @Sendable (CallHistory) throws -> T,
                             reply: @escaping @Sendable @TelephonyActor (Self, T) throws -> [DBusValue]) throws -> MethodReply {
        try answer(call, nil, body, reply: reply)
    }

    /// The same for a read whose result is the reply as it is, a list of records: sent from the
    /// database's executor, so that encoding a large one (a List of 10,000 entries) keeps the service
    /// queue free too, and written straight to the wire (`MethodCall.reply(records:)`). The same
    /// page asked for again (`key`: its arguments) while nothing was written since is answered
    /// from `listed`, here (Recents; Favorites are few, and listed once by each client).
    func answer<R: VarDictRecord>(_ call: MethodCall, listed: ListedPage<R>? = nil, key: [Int] = [],
                                  reading body: @escaping @Sendable (CallHistory) throws -> [R]) throws -> MethodReply {
        guard let history = context.history else { throw historyUnavailable(context.historyProblem ?? "no database") }
        let writes = history.database.writeCount
        if let page = listed?.page(for: key, writes: writes) {
            call.reply(records: page)
            return .later
        }
        let path = history.path
        history.database.read(body, completingHere: true) { result in
            switch result {
            case .success(let records):
                do {
                    let page = try EncodedRecords(records)
                    listed?.keep(page, for: key, writes: writes)
                    call.reply(records: page)
                } catch {
                    call.fail(error)
                }
            case .failure(let error): call.fail(historyUnavailable("\(path): \(error)"))
            }
        }
        return .later
    }

    /// The same for a write: in line behind the writes before it (Recents entries waiting for a lock among them).
    func answer<T: Sendable>(_ call: MethodCall, writing body: @escaping @Sendable (CallHistory) throws -> T,
                             reply: @escaping @Sendable @TelephonyActor (Self, T) throws -> [DBusValue]) throws -> MethodReply {
        try answer(call, .request, body, reply: reply)
    }

    private func answer<T: Sendable>(_ call: MethodCall, _ kind: HistoryQueue.Kind?, _ body: @escaping @Sendable (CallHistory) throws -> T,
                                     reply: @escaping @Sendable @TelephonyActor (Self, T) throws -> [DBusValue]) throws -> MethodReply {
        guard let history = context.history else { throw historyUnavailable(context.historyProblem ?? "no database") }
        let path = history.path
        let done: @Sendable (Result<T, any Error>) -> Void = TelephonyActor.onQueue { [weak self] result in
            guard let self else { return call.fail(stopping) }
            do {
                let value: T
                do {
                    value = try result.get()
                } catch let error as DBusError {
                    throw error
                } catch {
                    throw historyUnavailable("\(path): \(error)")
                }
                call.reply(try reply(self, value))
            } catch {
                call.fail(error)
            }
        }
        if let kind {
            history.database.write(kind, body, then: done)
        } else {
            history.database.read(body, then: done)
        }
        return .later
    }
}

/// What a Recents or Favorites method answers when the database cannot.
private func historyUnavailable(_ reason: String) -> DBusError {
    APIError.recentsUnavailable("Recents and Favorites are unavailable: \(reason)")
}

/// The last page `Recents.List` answered, with the database's write count when it was
/// asked for (`HistoryQueue.writeCount`): good for as long as that count stays the same. The Phone
/// app, the shell's search and the CLI list the same first page again and again; answered from
/// here it costs no query (440,000 instructions for 50 entries, issue 55), no hop to the
/// database's queue and no writing of its bytes (1.4M instructions). Pages of at most `largest`
/// entries are kept: the memory of one screen of them.
final class ListedPage<Record: VarDictRecord>: Sendable {
    static var largest: Int { 200 }
    /// Written once (`EncodedRecords`): sent again as the same bytes.
    private let last = Mutex<(key: [Int], writes: UInt64, page: EncodedRecords<Record>)?>(nil)

    func page(for key: [Int], writes: UInt64) -> EncodedRecords<Record>? {
        last.withLock { last in last.flatMap { $0.key == key && $0.writes == writes ? $0.page : nil } }
    }

    /// Keeps `page`, read while the count was `writes` (from the database's queue).
    func keep(_ page: EncodedRecords<Record>, for key: [Int], writes: UInt64) {
        guard page.records.count <= Self.largest else { return }
        last.withLock { $0 = (key, writes, page) }
    }
}
