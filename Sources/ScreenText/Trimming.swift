extension StringProtocol {
    /// The text without white space (spaces, tabs, line ends) at either end. Here rather than
    /// Foundation's `trimmingCharacters(in:)`, which FoundationEssentials does not have.
    public func trimmingWhitespace() -> String { trimming { $0.isWhitespace } }

    /// The text without the characters `isTrimmed` picks at either end.
    public func trimming(_ isTrimmed: (Character) -> Bool) -> String {
        guard let first = firstIndex(where: { !isTrimmed($0) }), let last = lastIndex(where: { !isTrimmed($0) }) else { return "" }
        return String(self[first...last])
    }
}
