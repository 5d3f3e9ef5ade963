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
/// Not thread-safe: its owner uses it from one serial executor.
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
    /// Applied or cancelled: every further call is `invalidArguments`.
    public private(set) var isFinished = false

    // Additions, ascending. Labels: UTF-8 bytes one after another, with each label's length.
    let blockingAdditions = Column<Int64>()
    let identificationAdditions = Column<Int64>()
    let labelLengths = Column<UInt16>()
    let labelBytes = Column<UInt8>()
    // Removals from the directory as it was, ascending.
    let blockingRemovals = Column<Int64>()
    let identificationRemovals = Column<Int64>()
    public private(set) var removesAllBlocking = false
    public private(set) var removesAllIdentification = false
    // Indices of additions that a later removal cancelled.
    var cancelledBlocking: Set<Int> = []
    var cancelledIdentification: Set<Int> = []
    // The last number of each kind in this update (0: none; numbers start at 1).
    var lastBlockingAddition: Int64 = 0
    var lastIdentificationAddition: Int64 = 0
    var lastBlockingRemoval: Int64 = 0
    var lastIdentificationRemoval: Int64 = 0

    public init(kind: Kind, maximumEntries: Int = DirectoryLimits.maximumEntries) {
        self.kind = kind
        self.maximumEntries = maximumEntries
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
        numbers.withUnsafeBufferPointer { blockingAdditions.append(contentsOf: $0) }
        if let last = numbers.last { lastBlockingAddition = last }
    }

    public func addIdentification(_ numbers: [Int64], labels: [String]) throws(DirectoryError) {
        try checkOpen()
        guard numbers.count == labels.count else {
            throw .invalidArguments("\(numbers.count) numbers but \(labels.count) labels; each identification entry needs one label.")
        }
        try checkAscending(numbers, after: lastIdentificationAddition, kind: "identification")
        var bytes = 0
        for (index, label) in labels.enumerated() {
            let length = label.utf8.count
            guard length <= DirectoryLimits.maximumLabelBytes else {
                throw .invalidArguments("The label of \(numbers[index]) has \(length) bytes of UTF-8; at most \(DirectoryLimits.maximumLabelBytes) are allowed.")
            }
            bytes += length
        }
        try checkRoom(for: numbers.count)
        let held = labelBytes.count + bytes
        guard held <= DirectoryLimits.maximumUpdateLabelBytes else {
            throw .maximumEntriesExceeded("The update would hold \(held) bytes of labels; an update may hold at most "
                + "\(DirectoryLimits.maximumUpdateLabelBytes >> 20) MiB of labels (complete it and continue in an incremental update).")
        }
        guard !numbers.isEmpty else { return }
        numbers.withUnsafeBufferPointer { identificationAdditions.append(contentsOf: $0) }
        labelLengths.reserveMore(labels.count)
        labelBytes.reserveMore(Swift.max(bytes, 1))
        // Straight into the reserved memory: no per-label call on the columns.
        let lengthBase = labelLengths.base! + labelLengths.count
        var byteBase = labelBytes.base! + labelBytes.count
        for (index, label) in labels.enumerated() {
            var label = label
            label.withUTF8 { utf8 in
                if let source = utf8.baseAddress, utf8.count > 0 { byteBase.update(from: source, count: utf8.count) }
                byteBase += utf8.count
                lengthBase[index] = UInt16(utf8.count)
            }
        }
        labelLengths.didAppend(labels.count)
        labelBytes.didAppend(bytes)
        if let last = numbers.last { lastIdentificationAddition = last }
    }

    // MARK: - Removals (incremental only)

    public func removeBlocking(_ numbers: [Int64]) throws(DirectoryError) {
        try remove(numbers, method: "RemoveBlockingEntries", kind: "blocking removal", into: blockingRemovals,
                   after: &lastBlockingRemoval, cancelling: blockingAdditions, &cancelledBlocking)
    }

    public func removeIdentification(_ numbers: [Int64]) throws(DirectoryError) {
        try remove(numbers, method: "RemoveIdentificationEntries", kind: "identification removal", into: identificationRemovals,
                   after: &lastIdentificationRemoval, cancelling: identificationAdditions, &cancelledIdentification)
    }

    public func removeAllBlocking() throws(DirectoryError) {
        try checkIncremental("RemoveAllBlockingEntries")
        removesAllBlocking = true
        blockingAdditions.removeAll()
        blockingRemovals.removeAll()
        cancelledBlocking = []
    }

    public func removeAllIdentification() throws(DirectoryError) {
        try checkIncremental("RemoveAllIdentificationEntries")
        removesAllIdentification = true
        identificationAdditions.removeAll()
        labelLengths.removeAll()
        labelBytes.removeAll()
        identificationRemovals.removeAll()
        cancelledIdentification = []
    }

    /// Removals of one kind: checked against that kind's last removal, kept, and cancelling that
    /// kind's additions of the same numbers.
    private func remove(_ numbers: [Int64], method: String, kind: String, into removals: Column<Int64>, after last: inout Int64,
                        cancelling additions: Column<Int64>, _ cancelled: inout Set<Int>) throws(DirectoryError) {
        try checkIncremental(method)
        try checkAscending(numbers, after: last, kind: kind)
        try checkRemovalRoom(removals.count + numbers.count)
        numbers.withUnsafeBufferPointer { removals.append(contentsOf: $0) }
        cancel(numbers, in: additions, cancelled: &cancelled)
        if let number = numbers.last { last = number }
    }

    /// Ends the update without applying it and frees its memory.
    public func cancel() {
        finish()
    }

    // MARK: - Rules

    func finish() {
        isFinished = true
        blockingAdditions.removeAll()
        identificationAdditions.removeAll()
        labelLengths.removeAll()
        labelBytes.removeAll()
        blockingRemovals.removeAll()
        identificationRemovals.removeAll()
        cancelledBlocking = []
        cancelledIdentification = []
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

    private func checkRemovalRoom(_ total: Int) throws(DirectoryError) {
        guard total <= maximumEntries else {
            throw .maximumEntriesExceeded("The update would remove \(total) entries of one kind; a provider has at most \(maximumEntries).")
        }
    }

    /// A removal cancels an earlier addition of the same number in this update.
    private func cancel(_ numbers: [Int64], in additions: Column<Int64>, cancelled: inout Set<Int>) {
        guard let first = numbers.first, let last = additions.last, first <= last else { return }
        let added = additions.buffer
        for number in numbers where number <= last {
            if let index = added.index(of: number) { cancelled.insert(index) }
        }
    }
}
