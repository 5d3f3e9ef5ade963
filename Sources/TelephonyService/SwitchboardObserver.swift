import TelephonyCore

/// Follows the switchboard's events. The service tells every observer of every event, in the
/// order they subscribed, on the actor; each handles the events it cares about
/// (the D-Bus objects, Recents, the call notifications, the sleep inhibitor, media pause).
@TelephonyActor
protocol SwitchboardObserver: AnyObject {
    func observe(_ event: SwitchboardEvent)
}
