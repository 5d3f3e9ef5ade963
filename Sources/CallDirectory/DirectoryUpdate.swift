import CBoundary
import Synchronization

/// One open Call Directory update of one provider, with CallKit's rules.
///
/// Batches may arrive in many calls (D-Bus messages of, say, 100,000 numbers);
/// the ascending check runs across them. Each call is atomic: a batch with an
/// error adds nothing, and the update stays usable.
///
/// Judgement calls (where CallKit leaves room):
/// - The four kinds (blocking additions, identification additions, blocking
///   removals, identification removals) are each strictly ascending across the
///   whole update, also across a `removeAll…`. An equal number is
///   `duplicateEntries`, a smaller one `entriesOutOfOrder`.
/// - Calls take effect in order: removals apply to the directory as it was,
///   additions after them, so removing then adding a number keeps it; removing
///   a number added earlier in the same update cancels that addition;
///   `removeAll…` also drops that kind's earlier additions and removals.
/// - Adding a number the directory already holds is not an error: the update
///   wins (an identification entry gets the new label). Removing a number the
///   directory does not hold is not an error.
/// - The maximum counts blocking and identification entries together. It is
///   checked on each call against the additions so far (an update can never
///   hold more) and at `Directory.applying(_:)` against the result.
///
/// Not thread-safe: its owner uses it from one serial executor. Each call is checked there and
/// answered at once; the label bytes an update of a store takes are then copied out of the call on
/// the store's lane, one batch after another whoever sent it, and staged in a file
/// (`StagedLabels`), so that its owner never spends a batch's copy, nor waits for the lane.
public final class DirectoryUpdate {
    public enum Kind: String, Sendable {
        /// Replaces the whole directory.
        case complete
        /// Additions and removals since the last successful update.
        case incremental
    }

    public let kind: Kind
    /// Entries of the provider, blocking and identification together, counting the result.
    public let maximumEntries: Int
    /// The most label bytes the directory may hold once this update is applied.
    public let maximumDirectoryLabelBytes: Int
    /// Applied or cancelled: every further call is `invalidArguments`.
    public private(set) var isFinished = false

    // Additions, ascending. Labels: UTF-8 bytes one after another (`labels`, on the lane), with
    // each label's length (here).
    let blockingAdditions = Column<Int64>()
    let identificationAdditions = Column<Int64>()
    let labelLengths = Column<UInt16>()
    /// The label bytes: used on `lane` (or here, when there is none).
    let labels: StagedLabels
    /// The label bytes taken so far (those of `labels` once the lane has caught up).
    private(set) var labelByteCount = 0
    /// Where the label bytes are copied and the update applied; nil: by its owner, at once.
    let lane: DirectoryLane?
    // Removals from the directory as it was, ascending.
    let blockingRemovals = Column<Int64>()
    let identificationRemovals = Column<Int64>()
    public private(set) var removesAllBlocking = false
    public private(set) var removesAllIdentification = false
    // Indices of additions that a later removal cancelled, ascending: removals and additions
    // both ascend, so each cancellation finds a later addition than the one before.
    let cancelledBlocking = Column<Int>()
    let cancelledIdentification = Column<Int>()
    // The last number of each kind in this update (0: none; numbers start at 1).
    var lastBlockingAddition: Int64 = 0
    var lastIdentificationAddition: Int64 = 0
    var lastBlockingRemoval: Int64 = 0
    var lastIdentificationRemoval: Int64 = 0

    /// The memory of every open update of the store, against which this one's growth counts.
    private let budget: DirectoryUpdateBudget
    /// What this update has taken from `budget`: `heldBytes` as of its last growth.
    private var reserved = 0

    /// Who pays for this update's memory (an app): its open updates together are bounded like one.
    private let account: String

    /// `lane`: where the label bytes are copied, and the update applied (a store's); nil: here, at
    /// once. `stagingFolder`: where they are staged in a file meanwhile; nil: in memory.
    public init(kind: Kind, maximumEntries: Int = DirectoryLimits.maximumEntries,
                maximumDirectoryLabelBytes: Int = DirectoryLimits.maximumDirectoryLabelBytes,
                budget: DirectoryUpdateBudget = DirectoryUpdateBudget(), account: String = "",
                lane: DirectoryLane? = nil, stagingFolder: String? = nil) {
        self.kind = kind
        self.maximumEntries = maximumEntries
        self.maximumDirectoryLabelBytes = maximumDirectoryLabelBytes
        self.budget = budget
        self.account = account
        self.lane = lane
        labels = StagedLabels(folder: stagingFolder)
    }

    deinit {
        budget.release(reserved, of: account)
        // Its file closed (and its blocks freed) on the lane, after any batch still on its way.
        if let lane, !lane.isCurrent {
            let labels = UncheckedSendable(labels)
            lane.async { labels.value.close() }
        }
    }

    /// The bytes the update holds: its numbers, label lengths, label bytes (staged in a file or
    /// not: they count all the same) and cancellations. Removals count as much as additions:
    /// removing an addition frees no room.
    public var heldBytes: Int {
        (blockingAdditions.count + identificationAdditions.count + blockingRemovals.count + identificationRemovals.count
            + cancelledBlocking.count + cancelledIdentification.count) * 8 + labelLengths.count * 2 + labelByteCount
    }

    public var isIncremental: Bool { kind == .incremental }

    /// Blocking additions still in effect.
    public var blockingAdditionCount: Int { blockingAdditions.count - cancelledBlocking.count }
    /// Identification additions still in effect.
    public var identificationAdditionCount: Int { identificationAdditions.count - cancelledIdentification.count }
    public var blockingRemovalCount: Int { blockingRemovals.count }
    public var identificationRemovalCount: Int { identificationRemovals.count }

    // MARK: - Additions

    public func addBlocking(_ numbers: [Int64]) throws(DirectoryError) {
        try checkOpen()
        try checkAscending(numbers, after: lastBlockingAddition, kind: "blocking")
        try checkRoom(for: numbers.count)
        try reserve(numbers.count * 8)
        numbers.withUnsafeBufferPointer { blockingAdditions.append(contentsOf: $0) }
        if let last = numbers.last { lastBlockingAddition = last }
    }

    public func addIdentification(_ numbers: [Int64], labels: [String]) throws(DirectoryError) {
        try checkOpen()
        guard numbers.count == labels.count else {
            throw .invalidArguments("\(numbers.count) numbers but \(labels.count) labels; each identification entry needs one label.")
        }
        try checkAscending(numbers, after: lastIdentificationAddition, kind: "identification")
        guard !numbers.isEmpty else { return }
        // The lengths go straight into memory past the column's end, kept only once the batch is taken.
        labelLengths.reserveMore(labels.count)
        let lengthBase = labelLengths.base! + labelLengths.count
        var bytes = 0
        for (index, label) in labels.enumerated() {
            let length = label.utf8.count
            guard length <= DirectoryLimits.maximumLabelBytes else {
                throw .invalidArguments("The label of \(numbers[index]) has \(length) bytes of UTF-8; at most \(DirectoryLimits.maximumLabelBytes) are allowed.")
            }
            lengthBase[index] = UInt16(length)
            bytes += length
        }
        try checkRoom(for: numbers.count)
        let held = labelByteCount + bytes
        guard held <= DirectoryLimits.maximumUpdateLabelBytes else {
            throw .maximumEntriesExceeded("The update would hold \(held) bytes of labels; an update may hold at most "
                + "\(DirectoryLimits.maximumUpdateLabelBytes >> 20) MiB of labels (complete it and continue in an incremental update).")
        }
        try reserve(numbers.count * 10 + bytes)
        numbers.withUnsafeBufferPointer { identificationAdditions.append(contentsOf: $0) }
        labelLengths.didAppend(labels.count)
        labelByteCount += bytes
        if let last = numbers.last { lastIdentificationAddition = last }
        // The bytes themselves are copied on the lane, after every batch taken before this one.
        onLane { $0.append(labels) }
    }

    // MARK: - Removals (incremental only)

    public func removeBlocking(_ numbers: [Int64]) throws(DirectoryError) {
        try remove(numbers, method: "RemoveBlockingEntries", kind: "blocking removal", into: blockingRemovals,
                   after: &lastBlockingRemoval, cancelling: blockingAdditions, cancelledBlocking)
    }

    public func removeIdentification(_ numbers: [Int64]) throws(DirectoryError) {
        try remove(numbers, method: "RemoveIdentificationEntries", kind: "identification removal", into: identificationRemovals,
                   after: &lastIdentificationRemoval, cancelling: identificationAdditions, cancelledIdentification)
    }

    public func removeAllBlocking() throws(DirectoryError) {
        try checkIncremental("RemoveAllBlockingEntries")
        removesAllBlocking = true
        discard([blockingAdditions.takeMemory(), blockingRemovals.takeMemory(), cancelledBlocking.takeMemory()])
        settleReservation()
    }

    public func removeAllIdentification() throws(DirectoryError) {
        try checkIncremental("RemoveAllIdentificationEntries")
        removesAllIdentification = true
        discard([identificationAdditions.takeMemory(), labelLengths.takeMemory(), identificationRemovals.takeMemory(),
                 cancelledIdentification.takeMemory()])
        labelByteCount = 0
        onLane { $0.removeAll() }
        settleReservation()
    }

    /// Removals of one kind: checked against that kind's last removal, kept, and cancelling that
    /// kind's additions of the same numbers.
    private func remove(_ numbers: [Int64], method: String, kind: String, into removals: Column<Int64>, after last: inout Int64,
                        cancelling additions: Column<Int64>, _ cancelled: Column<Int>) throws(DirectoryError) {
        try checkIncremental(method)
        try checkAscending(numbers, after: last, kind: kind)
        try checkRemovalRoom(removals.count + numbers.count)
        // A removal may cancel an addition: room for its index too.
        try reserve(numbers.count * 16)
        numbers.withUnsafeBufferPointer { removals.append(contentsOf: $0) }
        cancel(numbers, in: additions, cancelled: cancelled)
        settleReservation()
        if let number = numbers.last { last = number }
    }

    /// Ends the update without applying it and frees its memory.
    public func cancel() {
        finish()
    }

    // MARK: - Rules

    func finish() {
        isFinished = true
        discard([blockingAdditions.takeMemory(), identificationAdditions.takeMemory(), labelLengths.takeMemory(),
                 blockingRemovals.takeMemory(), identificationRemovals.takeMemory(), cancelledBlocking.takeMemory(),
                 cancelledIdentification.takeMemory()])
        labelByteCount = 0
        onLane { $0.close() }
        settleReservation()
    }

    /// Frees columns' memory (up to 128 MiB) on the lane, after what is there already; at once on
    /// the lane itself or without one.
    private func discard(_ blocks: [(UnsafeMutableRawPointer?, Int)]) {
        let memory = DiscardedMemory(blocks: blocks)
        if let lane, !lane.isCurrent {
            lane.async { memory.free() }
        } else {
            memory.free()
        }
    }

    /// Runs `work` on the label bytes where they live: queued on the lane behind what is there
    /// already, or at once on the lane itself or without one. The bytes are used on the lane only
    /// (or here, when there is none): that is what lets them cross to it.
    private func onLane(_ work: @escaping @Sendable (StagedLabels) -> Void) {
        if let lane, !lane.isCurrent {
            let labels = UncheckedSendable(labels)
            lane.async { work(labels.value) }
        } else {
            work(labels)
        }
    }

    func checkOpen() throws(DirectoryError) {
        guard !isFinished else { throw .invalidArguments("The directory update has already been completed or cancelled.") }
    }

    /// The update is open, and incremental: `method` removes.
    private func checkIncremental(_ method: String) throws(DirectoryError) {
        try checkOpen()
        guard kind == .incremental else {
            throw .unexpectedIncrementalRemoval("\(method) is allowed in incremental updates only; this update replaces the whole directory.")
        }
    }

    private func checkAscending(_ numbers: [Int64], after last: Int64, kind: String) throws(DirectoryError) {
        var previous = last
        for number in numbers {
            guard DirectoryLimits.numberRange.contains(number) else {
                throw .invalidArguments("\(number) is not a phone number: \(kind) entries are country code and digits, 1 … 9223372036854775806.")
            }
            if number == previous {
                throw .duplicateEntries("The \(kind) entry \(number) appears twice.")
            }
            if number < previous {
                throw .entriesOutOfOrder("The \(kind) entry \(number) follows \(previous); each kind must be strictly ascending across the whole update.")
            }
            previous = number
        }
    }

    private func checkRoom(for count: Int) throws(DirectoryError) {
        let total = blockingAdditionCount + identificationAdditionCount + count
        guard total <= maximumEntries else {
            throw .maximumEntriesExceeded("The update would hold \(total) entries; a provider may have at most \(maximumEntries).")
        }
    }

    /// Room for `bytes` more, within this update's bound and the store's: `maximumEntriesExceeded`
    /// past either, before anything is kept.
    private func reserve(_ bytes: Int) throws(DirectoryError) {
        let held = heldBytes + bytes
        guard held <= DirectoryLimits.maximumUpdateBytes else {
            throw .maximumEntriesExceeded("The update would hold \(held) bytes; an update may hold at most \(DirectoryLimits.maximumUpdateBytes >> 20) MiB "
                + "(8 bytes a number, added or removed, 10 more and its label's an identification entry; complete it and continue in an incremental update).")
        }
        switch budget.take(held - reserved, for: account) {
        case .taken: break
        case .accountFull:
            throw .maximumEntriesExceeded("This app's open directory updates would hold more than \(budget.perAccount >> 20) MiB together; "
                + "complete one and continue in an incremental update.")
        case .full:
            throw .maximumEntriesExceeded("The open directory updates of all apps hold \(budget.limit >> 20) MiB, all the service keeps for them; "
                + "complete this update and continue in an incremental one, or try again when others have completed.")
        }
        reserved = held
    }

    /// After the update shrank (or grew less than reserved): gives back what it no longer holds.
    private func settleReservation() {
        let held = heldBytes
        if held < reserved {
            budget.release(reserved - held, of: account)
            reserved = held
        }
    }

    private func checkRemovalRoom(_ total: Int) throws(DirectoryError) {
        guard total <= maximumEntries else {
            throw .maximumEntriesExceeded("The update would remove \(total) entries of one kind; a provider has at most \(maximumEntries).")
        }
    }

    /// A removal cancels an earlier addition of the same number in this update.
    private func cancel(_ numbers: [Int64], in additions: Column<Int64>, cancelled: Column<Int>) {
        guard let first = numbers.first, let last = additions.last, first <= last else { return }
        let added = additions.buffer
        for number in numbers where number <= last {
            if let index = added.index(of: number) { cancelled.append(index) }
        }
    }
}

/// The memory all open directory updates of a store may hold together
/// (`DirectoryLimits.maximumOpenUpdateBytes`): each update takes from it as it grows and gives back
/// when it ends. Updates grow on their owner's executor, but one may end on the thread that applies it.
public final class DirectoryUpdateBudget: Sendable {
    public let limit: Int
    /// What one account's open updates may hold together: one update's bound, however many
    /// providers (Names) it opens them for.
    public let perAccount: Int
    private let held = Mutex<(total: Int, byAccount: [String: Int])>((0, [:]))

    public init(limit: Int = DirectoryLimits.maximumOpenUpdateBytes, perAccount: Int = DirectoryLimits.maximumUpdateBytes) {
        self.limit = limit
        self.perAccount = perAccount
    }

    /// What the open updates hold now.
    public var heldBytes: Int { held.withLock { $0.total } }

    enum Taking { case taken, accountFull, full }

    func take(_ bytes: Int, for account: String) -> Taking {
        held.withLock { held in
            let mine = held.byAccount[account, default: 0]
            guard mine + bytes <= perAccount else { return .accountFull }
            guard held.total + bytes <= limit else { return .full }
            held.total += bytes
            held.byAccount[account] = mine + bytes
            return .taken
        }
    }

    func release(_ bytes: Int, of account: String) {
        guard bytes > 0 else { return }
        held.withLock { held in
            held.total -= bytes
            let left = held.byAccount[account, default: 0] - bytes
            held.byAccount[account] = left > 0 ? left : nil
        }
    }
}
