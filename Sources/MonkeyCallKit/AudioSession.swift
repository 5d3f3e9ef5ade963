/// The call's audio session, handed to `provider(_:didActivate:)` and
/// `provider(_:didDeactivate:)`. On the desktop the app opens its own audio
/// streams; this marks when it may do so.
public final class AudioSession: Sendable {
    /// Whether the service has the call's audio active.
    public let isActive: Bool
    init(isActive: Bool) { self.isActive = isActive }
}

/// CallKit apps name the audio session by AVFoundation's type.
public typealias AVAudioSession = AudioSession
