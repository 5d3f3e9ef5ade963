import Foundation

/// The goals of issue 55: each figure a ratio of two times measured in the same run, at most this.
enum Goals {
    /// One provider's call lifecycle / the same messages from a no-op peer.
    static let lifecycleFloor = 1.25
    /// A lifecycle with 16 subscribers / a no-op peer sending the same unicast copies to 16.
    static let subscribersFloor = 1.3
    /// ReportNewIncomingCall → Notify at the server / a no-op peer answering the report and calling Notify.
    static let notifyFloor = 1.3
    /// Recents.List(50) / the same page from a no-op server.
    static let recentsFloor = 1.3
    static let identifyPing = 1.15
    static let getPing = 1.1
    /// A ring from a caller among 10,000 contacts / the same ring on a daemon without contacts.
    static let contactsRing = 1.1
}

/// One figure of `--json`: the service's time against what it is measured against (its floor),
/// both from the same run, and the goal of their ratio.
struct Figure {
    /// `lifecycle/floor`, `get/ping`, ...: the same names run after run, for a history.
    let name: String
    /// The service's time and the floor's, in microseconds (medians, or wall time per lifecycle).
    let service: Double
    let floor: Double
    /// What the floor is, in words.
    let floorIs: String
    let goal: Double
    /// Samples (or lifecycles) of each.
    let count: Int
    var value: Double { service / floor }
    var met: Bool { value.isFinite && value <= goal }

    /// One line of JSON: `{"figure": …, "value": …, "goal": …, "met": …, …}`.
    func json(quick: Bool, build: String, at date: String) -> String {
        let fields: [(String, String)] = [
            ("figure", Self.string(name)), ("value", Self.number(value, 4)), ("goal", Self.number(goal, 2)), ("met", met ? "true" : "false"),
            ("unit", Self.string("ratio")), ("service_us", Self.number(service, 1)), ("floor_us", Self.number(floor, 1)),
            ("floor", Self.string(floorIs)), ("count", "\(count)"), ("quick", quick ? "true" : "false"),
            ("build", Self.string(build)), ("date", Self.string(date)),
        ]
        return "{" + fields.map { "\(Self.string($0.0)): \($0.1)" }.joined(separator: ", ") + "}"
    }

    private static func number(_ value: Double, _ digits: Int) -> String { value.isFinite ? fixed(value, digits) : "null" }

    /// `text` as a JSON string: quoted, escaped by Foundation's encoder (slashes as they are).
    private static func string(_ text: String) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .withoutEscapingSlashes
        // A String always encodes: only non-finite numbers throw.
        return String(decoding: try! encoder.encode(text), as: UTF8.self)
    }

    static func lifecycle(_ single: LifecycleResult, _ floor: FloorResult) -> Figure {
        Figure(name: "lifecycle/floor", service: single.microsecondsEach, floor: floor.microsecondsEach,
               floorIs: "the same messages from a no-op peer (the lifecycle floor), alternating rounds", goal: Goals.lifecycleFloor, count: single.count)
    }

    static func subscribers(_ result: SubscriberCost.Result) -> Figure {
        Figure(name: "subscribers16/floor", service: result.with.microsecondsEach, floor: result.floor.microsecondsEach,
               floorIs: "a no-op peer replaying the lifecycle with the same unicast copies to \(result.subscribers) subscribers, alternating rounds",
               goal: Goals.subscribersFloor, count: result.with.count)
    }

    /// Nil when the run had no floor for Notify (the contacts phase's calls).
    static func notify(_ result: NotificationLatency.Result) -> Figure? {
        guard let floor = result.floor else { return nil }
        return Figure(name: "notify/floor", service: result.notify.median, floor: floor.median,
                      floorIs: "a no-op peer answering the report and calling Notify itself, same server, same rounds",
                      goal: Goals.notifyFloor, count: result.notify.sorted.count)
    }

    static func recents(_ result: RecentsResult) -> Figure {
        Figure(name: "recents-list/floor", service: result.pagedList.median, floor: result.floor.median,
               floorIs: "the same page from a no-op server, interleaved rounds",
               goal: Goals.recentsFloor, count: result.pagedList.sorted.count)
    }

    static func identify(_ result: DirectoryResult) -> Figure {
        Figure(name: "identify/ping", service: result.identify.median, floor: result.ping.median,
               floorIs: "Peer.Ping to the daemon, interleaved rounds", goal: Goals.identifyPing, count: result.identify.sorted.count)
    }

    static func get(_ result: RoundTripResult) -> Figure {
        Figure(name: "get/ping", service: result.get.median, floor: result.ping.median,
               floorIs: "Peer.Ping to the daemon, interleaved rounds", goal: Goals.getPing, count: result.get.sorted.count)
    }

    static func contactsRing(_ result: ContactsPhase.Result) -> Figure {
        Figure(name: "contacts-ring/none", service: result.with.notify.median, floor: result.without.notify.median,
               floorIs: "the same calls to a daemon without contacts, alternating rounds", goal: Goals.contactsRing,
               count: result.with.notify.sorted.count)
    }
}

extension Report {
    /// The figures of issue 55, in its order.
    var figures: [Figure] {
        [Figure.lifecycle(lifecycles[0], floor), Figure.subscribers(subscribers)] + [Figure.notify(notifications)].compactMap { $0 }
            + [Figure.recents(recents), Figure.identify(directory), Figure.get(roundTrips), Figure.contactsRing(contacts)]
    }
}
