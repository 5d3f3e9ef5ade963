import TelephonyCore

/// A part of the service that follows the switchboard's events, on the actor: `EventSinks` hands
/// each part (the D-Bus objects, Recents, the call notifications, the sleep inhibitor, media
/// pause) only the events it handles.
@TelephonyActor
protocol SwitchboardObserver: AnyObject {
    func observe(_ event: SwitchboardEvent)
}
