/// Why a call ended, when the provider reports it (CallKit's `CXCallEndedReason`).
public enum CXCallEndedReason: Int, Sendable, CaseIterable {
    case failed = 1
    case remoteEnded = 2
    case unanswered = 3
    case answeredElsewhere = 4
    case declinedElsewhere = 5
}
