import FoundationEssentials
/// What a provider tells its app, on the queue the app chose
/// (CallKit's `CXProviderDelegate`).
///
/// An app implements the `perform` methods for the actions it supports. The
/// default implementations fail the action, so that an action the app does
/// not handle fails at once instead of timing out.
public protocol CXProviderDelegate: AnyObject {
    /// The provider's state was reset: drop every call, as if all had ended.
    /// Called when the service restarted or the registration was lost.
    func providerDidReset(_ provider: CXProvider)
    /// The provider is registered and ready.
    func providerDidBegin(_ provider: CXProvider)

    func provider(_ provider: CXProvider, perform action: CXStartCallAction)
    func provider(_ provider: CXProvider, perform action: CXAnswerCallAction)
    func provider(_ provider: CXProvider, perform action: CXEndCallAction)
    func provider(_ provider: CXProvider, perform action: CXSetHeldCallAction)
    func provider(_ provider: CXProvider, perform action: CXSetMutedCallAction)
    func provider(_ provider: CXProvider, perform action: CXSetGroupCallAction)
    func provider(_ provider: CXProvider, perform action: CXPlayDTMFCallAction)

    /// The app did not fulfil or fail `action` in time; it has failed and must not be fulfilled now.
    func provider(_ provider: CXProvider, timedOutPerforming action: CXAction)
    /// The call's audio is active: start media now.
    func provider(_ provider: CXProvider, didActivate audioSession: AVAudioSession)
    /// The call's audio is no longer active: stop media.
    func provider(_ provider: CXProvider, didDeactivate audioSession: AVAudioSession)
    /// The user pressed the app's button on the call's notification (CallKit's in-call app
    /// button): show that call. The service has already activated the app through its desktop entry.
    func provider(_ provider: CXProvider, didRequestShowAppFor callUUID: UUID)
}

extension CXProviderDelegate {
    public func providerDidBegin(_ provider: CXProvider) {}
    public func provider(_ provider: CXProvider, perform action: CXStartCallAction) { action.fail() }
    public func provider(_ provider: CXProvider, perform action: CXAnswerCallAction) { action.fail() }
    public func provider(_ provider: CXProvider, perform action: CXEndCallAction) { action.fail() }
    public func provider(_ provider: CXProvider, perform action: CXSetHeldCallAction) { action.fail() }
    public func provider(_ provider: CXProvider, perform action: CXSetMutedCallAction) { action.fail() }
    public func provider(_ provider: CXProvider, perform action: CXSetGroupCallAction) { action.fail() }
    public func provider(_ provider: CXProvider, perform action: CXPlayDTMFCallAction) { action.fail() }
    public func provider(_ provider: CXProvider, timedOutPerforming action: CXAction) {}
    public func provider(_ provider: CXProvider, didActivate audioSession: AVAudioSession) {}
    public func provider(_ provider: CXProvider, didDeactivate audioSession: AVAudioSession) {}
    public func provider(_ provider: CXProvider, didRequestShowAppFor callUUID: UUID) {}
}
