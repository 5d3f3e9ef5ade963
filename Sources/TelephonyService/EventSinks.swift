import TelephonyCore

/// Where the switchboard's events go: three sinks, each handed an event only when it needs it (an
/// event a part does not need costs it nothing), in the order `deliver` gives, one place for all:
/// - the **bus publisher**: the call and provider objects, the provider's and the controller's
///   signals, open directory updates;
/// - the **session effects**: Recents kept, the machine kept awake, media paused;
/// - the **presenter**: the call's card and its ringtone.
/// A call's object exists before its provider's `Calls` names it. A new call's card goes up first:
/// what nobody waits on to see the call (its object, the provider's `Calls`, the session's effects)
/// follows it, in the same turn of the queue, so nobody who hears of the call can ask for its
/// object before it exists.
@TelephonyActor
final class EventSinks {
    let bus: BusPublisher
    let session: SessionEffects
    /// nil without notifications (`--no-notifications`).
    let presenter: CallNotifications?

    init(bus: BusPublisher, session: SessionEffects, presenter: CallNotifications?) {
        self.bus = bus
        self.session = session
        self.presenter = presenter
    }

    /// From now on the switchboard's events come here, each as its operation ends. Weakly: the sinks
    /// hold objects that hold the switchboard.
    func listen(to switchboard: Switchboard) {
        switchboard.onEvent = { [weak self] event in self?.deliver(event) }
    }

    private func deliver(_ event: SwitchboardEvent) {
        switch event {
        case .callAdded:
            // The card first: handed to the GLib thread, it is on its way while the call's object
            // and the rest are sent (issue 55). The object is exported in this same turn of the
            // queue, so no one who learns of the call from its card can ask for it too early.
            presenter?.observe(event)
            bus.calls.observe(event)
            bus.providers.observe(event)
            session.apply(event)
        case .callChanged:
            bus.calls.observe(event)
            session.apply(event)
            presenter?.observe(event)
        case .callRemoved:
            bus.calls.observe(event)
            bus.providers.observe(event)
            session.apply(event)
            presenter?.observe(event)
        case .providerRegistered, .performAction, .actionTimedOut:
            bus.providers.observe(event)
        case .audioSessionActivated, .audioSessionDeactivated:
            bus.providers.observe(event)
            session.apply(event)
        case .providerRemoved:
            bus.directories.observe(event)
            bus.providers.observe(event)
        case .transactionCompleted:
            bus.controller.observe(event)
        case .callRefused:
            session.apply(event)
        }
    }
}

/// The service's D-Bus objects that publish what the events change (`EventSinks.deliver` says
/// which hears what).
@TelephonyActor
struct BusPublisher {
    let directories: DirectoryInterfaces
    let calls: CallObjects
    let providers: ProviderObjects
    let controller: CallControllerInterface
}

/// What calls change in the user's session beyond the bus.
@TelephonyActor
struct SessionEffects {
    let recents: RecentsInterface
    /// nil without a system bus to ask logind.
    let sleepInhibitor: SleepInhibitor?
    let mediaPause: MediaPause

    func apply(_ event: SwitchboardEvent) {
        switch event {
        case .callRefused:
            recents.observe(event)
        case .callRemoved:
            recents.observe(event)
            sleepInhibitor?.observe(event)
        case .callAdded, .callChanged:
            sleepInhibitor?.observe(event)
        case .audioSessionActivated, .audioSessionDeactivated:
            mediaPause.observe(event)
        default:
            break
        }
    }
}
