// MonkeyCall for GNOME Shell: the call on the lock screen and in the top bar.
//
// The logic, written once for GNOME Shell 43–44 (legacy `imports`) and 45 and later (ES modules).
// It imports nothing itself: each entry point (extension-legacy.js, extension.js) passes the
// shell's modules in `shell`. scripts/lib/gnome-shell-extension assembles the variant that fits
// the installed shell (for 45+ it adds the `export` line below this comment's twin at the end).
//
// A client of org.monkeycall.Telephony1 like any other: Manager.Subscribe, the call objects
// (ObjectManager, PropertiesChanged), CallController and Call.Silence. It keeps no state of its
// own beyond what is on screen: the calls are the service's, mirrored while it runs.
//
// GNOME Shell's private objects, touched only where no public way exists:
// - `Main.screenShield._wakeUpScreen()`: wakes a blanked screen for a ringing call (the shell
//   wakes it only for a notification its lock screen lists, and the card hides that entry);
// - `Main.screenShield._dialog._notificationsBox._sources`: the lock screen's list, to hide the
//   entry of the app whose call the card shows, so that the call is not listed twice.
// The card itself goes into `Main.layoutManager.screenShieldGroup` (public), above the unlock
// dialog: a click on it never reaches the dialog's tap action, which would show the unlock prompt.

var BUS_NAME = 'org.monkeycall.Telephony1';
var ROOT = '/org/monkeycall/Telephony1';
var IFACE = 'org.monkeycall.Telephony1';
var CALL_IFACE = `${IFACE}.Call`;
var PROVIDER_IFACE = `${IFACE}.Provider`;
var PHONE_APP = 'org.monkeycall.Phone';
var UP_STATES = ['dialing', 'connecting', 'active', 'held'];

var CallUI = class CallUI {
    // `shell`: {St, Clutter, Gio, GLib, Shell, Main, PanelMenu, PopupMenu, Gettext}; `metadata`:
    // the extension's metadata.json (`locale-dir`: the catalogs of a user's install).
    constructor(shell, metadata) {
        this._shell = shell;
        if (metadata['locale-dir'])
            shell.Gettext.bindtextdomain('monkeycall', metadata['locale-dir']);
        const domain = shell.Gettext.domain('monkeycall');
        this._ = text => domain.gettext(text);
        this._C = (context, text) => domain.pgettext(context, text);
    }

    // MARK: Enabling and disabling: everything made here is taken down in disable().

    enable() {
        const {Gio, GLib, Main} = this._shell;
        this._calls = new Map();        // path → the call's properties
        this._providers = new Map();    // provider path → {name, appId, desktopEntry, iconName}
        this._bus = Gio.DBus.session;
        this._card = null;
        this._indicator = null;
        this._hidden = new Map();       // lock-screen entry box → its notify::visible handler
        this._timer = 0;
        this._cancellable = new Gio.Cancellable();
        this._notificationSettings = new Gio.Settings({schema_id: 'org.gnome.desktop.notifications'});
        this._notificationSettings.connectObject('changed', () => this._update(), this);
        this._phoneSettings = null;
        Main.screenShield?.connectObject('locked-changed', () => this._update(), this);
        Main.sessionMode.connectObject('updated', () => this._update(), this);
        // A source the lock screen lists after the card showed (the call's notification arrives
        // after its call object): hidden once the list has made its entry, after this emission.
        this._relist = 0;
        Main.messageTray.connectObject('source-added', () => {
            if (!this._card || this._relist)
                return;
            this._relist = GLib.idle_add(GLib.PRIORITY_DEFAULT, () => {
                this._relist = 0;
                if (this._card)
                    this._hideListEntries(this._card.appName);
                return GLib.SOURCE_REMOVE;
            });
        }, this);
        this._signals = this._bus.signal_subscribe(BUS_NAME, null, null, null, null, Gio.DBusSignalFlags.NONE,
            (connection, sender, path, iface, member, parameters) => this._onSignal(path, iface, member, parameters));
        this._watch = Gio.bus_watch_name_on_connection(this._bus, BUS_NAME, Gio.BusNameWatcherFlags.NONE,
            () => this._serviceAppeared(), () => this._serviceVanished());
    }

    disable() {
        const {Gio, GLib, Main} = this._shell;
        this._cancellable.cancel();
        Gio.bus_unwatch_name(this._watch);
        this._bus.signal_unsubscribe(this._signals);
        if (this._subscribed) {
            this._call(ROOT, `${IFACE}.Manager`, 'Unsubscribe', null);
            this._subscribed = false;
        }
        Main.sessionMode.disconnectObject(this);
        Main.screenShield?.disconnectObject(this);
        Main.messageTray.disconnectObject(this);
        if (this._relist)
            GLib.source_remove(this._relist);
        this._relist = 0;
        this._notificationSettings.disconnectObject(this);
        this._notificationSettings = null;
        this._phoneSettings?.disconnectObject(this);
        this._phoneSettings = null;
        this._calls.clear();
        this._providers.clear();
        this._showCard(null);
        this._showIndicator([]);
        this._stopTimer();
        this._bus = null;
    }

    // MARK: The service

    _serviceAppeared() {
        const {GLib} = this._shell;
        this._call(ROOT, `${IFACE}.Manager`, 'Subscribe', null, () => {
            this._subscribed = true;
        });
        this._call(ROOT, 'org.freedesktop.DBus.ObjectManager', 'GetManagedObjects', null, reply => {
            const [objects] = reply.recursiveUnpack();
            for (const [path, interfaces] of Object.entries(objects)) {
                if (interfaces[CALL_IFACE])
                    this._calls.set(path, interfaces[CALL_IFACE]);
            }
            this._update();
        }, GLib.VariantType.new('(a{oa{sa{sv}}})'));
    }

    _serviceVanished() {
        this._subscribed = false;
        this._calls.clear();
        this._providers.clear();
        this._update();
    }

    _onSignal(path, iface, member, parameters) {
        if (iface === `${IFACE}.Manager` && member === 'SubscriptionDropped') {
            // The shell stalled long enough for the service to stop telling it of calls: subscribe
            // again, and read the calls afresh.
            this._subscribed = false;
            this._serviceAppeared();
        } else if (iface === 'org.freedesktop.DBus.ObjectManager' && member === 'InterfacesAdded') {
            const [added, interfaces] = parameters.recursiveUnpack();
            if (interfaces[CALL_IFACE]) {
                this._calls.set(added, interfaces[CALL_IFACE]);
                this._update();
            }
        } else if (iface === 'org.freedesktop.DBus.ObjectManager' && member === 'InterfacesRemoved') {
            const [removed] = parameters.recursiveUnpack();
            if (this._calls.delete(removed))
                this._update();
        } else if (iface === 'org.freedesktop.DBus.Properties' && member === 'PropertiesChanged') {
            const [changedIface, changed] = parameters.recursiveUnpack();
            const call = this._calls.get(path);
            if (changedIface !== CALL_IFACE || !call)
                return;
            Object.assign(call, changed);
            if (call.HasEnded)
                this._calls.delete(path);
            this._update();
        }
    }

    // One method call to the service; `done` gets the reply (a GLib.Variant). Errors are logged:
    // the service answers them in plain words.
    _call(path, iface, method, parameters, done = null, replyType = null) {
        const {Gio} = this._shell;
        if (!this._bus)
            return;
        this._bus.call(BUS_NAME, path, iface, method, parameters, replyType, Gio.DBusCallFlags.NONE, -1,
            done ? this._cancellable : null, (connection, result) => {
                try {
                    const reply = connection.call_finish(result);
                    done?.(reply);
                } catch (error) {
                    if (!error.matches?.(Gio.IOErrorEnum, Gio.IOErrorEnum.CANCELLED))
                        console.warn(`MonkeyCall: ${method}: ${error.message}`);
                }
            });
    }

    _act(method, ...args) {
        const {GLib} = this._shell;
        const signature = args.map(a => (typeof a === 'boolean' ? 'b' : 's')).join('');
        this._call(ROOT, `${IFACE}.CallController`, method, new GLib.Variant(`(${signature})`, args));
    }

    // End the calls that are up, answer `call`: one transaction, as the notification's End & Answer.
    _endAndAnswer(call) {
        const {GLib} = this._shell;
        const actions = this._upCalls().filter(c => c.State !== 'held')
            .map(c => ['end', {CallUUID: new GLib.Variant('s', c.UUID)}]);
        actions.push(['answer', {CallUUID: new GLib.Variant('s', call.UUID)}]);
        this._call(ROOT, `${IFACE}.CallController`, 'RequestTransaction', new GLib.Variant('(a(sa{sv}))', [actions]));
    }

    _silence(call) {
        this._call(this._pathOf(call), CALL_IFACE, 'Silence', null);
    }

    _pathOf(call) {
        return [...this._calls.entries()].find(([, c]) => c === call)?.[0];
    }

    // The app of `call` as the shell knows it: its desktop file's name and icon (a sandboxed
    // app's exported file, a host app's DesktopEntry), else the provider's Name and IconName.
    _app(call) {
        const {Shell} = this._shell;
        const provider = this._providers.get(call.Provider);
        if (!provider) {
            this._providers.set(call.Provider, {name: call.ProviderName});
            this._call(call.Provider, 'org.freedesktop.DBus.Properties', 'GetAll',
                new this._shell.GLib.Variant('(s)', [PROVIDER_IFACE]), reply => {
                    const [properties] = reply.recursiveUnpack();
                    const configuration = properties.Configuration ?? {};
                    this._providers.set(call.Provider, {
                        name: properties.Name, appId: properties.AppId,
                        desktopEntry: configuration.DesktopEntry, iconName: configuration.IconName,
                    });
                    this._update();
                });
        }
        const known = this._providers.get(call.Provider);
        const id = known.appId || known.desktopEntry;
        const app = id ? Shell.AppSystem.get_default().lookup_app(`${id}.desktop`) : null;
        return {
            name: app?.get_name() ?? known.name ?? call.ProviderName,
            icon: app?.get_icon() ?? null,
            iconName: known.iconName || 'call-start-symbolic',
        };
    }

    // MARK: What is on screen, derived from the calls each time they change

    _upCalls() {
        return [...this._calls.values()].filter(c => UP_STATES.includes(c.State));
    }

    _update() {
        const {Main} = this._shell;
        if (!this._bus)
            return;
        const calls = [...this._calls.values()];
        const ringing = calls.filter(c => c.State === 'ringing').sort((a, b) => b.StartedAt - a.StartedAt);
        const up = this._upCalls();
        const locked = Main.sessionMode.isLocked;
        // Locked: the card shows the newest ringing call, else the call that is up.
        const focus = ringing[0] ?? up.find(c => c.State !== 'held') ?? up[0] ?? null;
        const wasRinging = this._card?.ringingUUID;
        this._showCard(locked ? focus : null);
        if (locked && ringing[0] && wasRinging !== ringing[0].UUID)
            Main.screenShield?._wakeUpScreen?.();
        // In the session: the indicator while a call is up; ringing calls keep their banner.
        this._showIndicator(locked ? [] : up);
        if (this._card || this._indicator)
            this._startTimer();
        else
            this._stopTimer();
    }

    // The duration's timer: only while a card or the indicator shows.
    _startTimer() {
        const {GLib} = this._shell;
        if (this._timer)
            return;
        this._timer = GLib.timeout_add_seconds(GLib.PRIORITY_DEFAULT, 1, () => {
            this._card?.tick();
            this._indicator?.tick();
            return GLib.SOURCE_CONTINUE;
        });
    }

    _stopTimer() {
        const {GLib} = this._shell;
        if (this._timer)
            GLib.source_remove(this._timer);
        this._timer = 0;
    }

    // "M:SS" (or "H:MM:SS") since the call connected.
    _duration(call) {
        const {GLib} = this._shell;
        if (!call.ConnectedAt)
            return '';
        const seconds = Math.max(0, Math.floor((GLib.get_real_time() - call.ConnectedAt) / 1e6));
        const h = Math.floor(seconds / 3600), m = Math.floor(seconds / 60) % 60, s = seconds % 60;
        const two = n => String(n).padStart(2, '0');
        return h > 0 ? `${h}:${two(m)}:${two(s)}` : `${m}:${two(s)}`;
    }

    // Whether the user lets notification details show on the lock screen: GNOME's
    // show-in-lock-screen, and the Phone app's own policy where the user set it.
    _detailsOnLockScreen() {
        const {Gio} = this._shell;
        if (!this._notificationSettings.get_boolean('show-in-lock-screen'))
            return false;
        if (!this._phoneSettings) {
            const path = `/org/gnome/desktop/notifications/application/${PHONE_APP.toLowerCase().replace(/[^a-z0-9]/g, '-')}/`;
            this._phoneSettings = new Gio.Settings({schema_id: 'org.gnome.desktop.notifications.application', path});
            this._phoneSettings.connectObject('changed', () => this._update(), this);
        }
        for (const key of ['show-in-lock-screen', 'details-in-lock-screen']) {
            const chosen = this._phoneSettings.get_user_value(key);
            if (chosen && !chosen.unpack())
                return false;
        }
        return true;
    }

    // MARK: The lock screen's card

    _showCard(call) {
        const {Main} = this._shell;
        if (!call) {
            if (this._card) {
                this._card.destroy();
                this._card = null;
            }
            this._showListEntries();
            return;
        }
        if (!this._card) {
            this._card = new CallCard(this, this._shell);
            Main.layoutManager.screenShieldGroup.add_child(this._card.actor);
        }
        const app = this._app(call);
        this._card.show(call, app, this._detailsOnLockScreen(), this._upCalls().filter(c => c !== call));
        this._hideListEntries(app.name);
    }

    // The lock screen's own entry for the app of the card's call, hidden while the card shows it.
    _hideListEntries(appName) {
        const {Main} = this._shell;
        const sources = Main.screenShield?._dialog?._notificationsBox?._sources;
        if (!(sources instanceof Map))
            return;
        for (const [source, entry] of sources) {
            const box = entry?.sourceBox;
            if (!box || this._hidden.has(box) || ![appName, this._phoneAppName()].includes(source.title))
                continue;
            box.hide();
            // The list shows it again on each change of its count: hidden again at once.
            const id = box.connect('notify::visible', () => box.visible && box.hide());
            box.connectObject('destroy', () => this._hidden.delete(box), this);
            this._hidden.set(box, id);
        }
    }

    _showListEntries() {
        for (const [box, id] of this._hidden) {
            box.disconnect(id);
            box.disconnectObject(this);
            box.show();
        }
        this._hidden.clear();
    }

    _phoneAppName() {
        const {Shell} = this._shell;
        return Shell.AppSystem.get_default().lookup_app(`${PHONE_APP}.desktop`)?.get_name() ?? null;
    }

    // MARK: The top bar

    _showIndicator(up) {
        const {Main} = this._shell;
        if (up.length === 0) {
            this._indicator?.destroy();
            this._indicator = null;
            return;
        }
        if (!this._indicator) {
            this._indicator = new CallIndicator(this, this._shell);
            Main.panel.addToStatusArea('monkeycall-call', this._indicator.button);
        }
        const current = up.find(c => c.State !== 'held') ?? up[0];
        this._indicator.show(current, this._app(current), up.filter(c => c !== current).map(c => [c, this._app(c)]));
    }

    // The Phone app's call window on `call` (org.freedesktop.Application ActivateAction show-call).
    _showCall(call) {
        const {Gio, GLib} = this._shell;
        this._bus.call(PHONE_APP, '/org/monkeycall/Phone', 'org.freedesktop.Application', 'ActivateAction',
            new GLib.Variant('(sava{sv})', ['show-call', [new GLib.Variant('s', call.UUID)], {}]),
            null, Gio.DBusCallFlags.NONE, -1, null, (connection, result) => {
                try {
                    connection.call_finish(result);
                } catch (error) {
                    console.warn(`MonkeyCall: cannot open the Phone app: ${error.message}`);
                }
            });
    }
};

// A button of the card or the menu: large, focusable, named for assistive technologies.
function makeButton(shell, label, onClick, style = '') {
    const {St} = shell;
    const button = new St.Button({
        label, can_focus: true, reactive: true, track_hover: true, x_expand: true,
        style_class: `button monkeycall-button ${style}`,
    });
    button.accessible_name = label;
    button.connect('clicked', onClick);
    return button;
}

function makeBox(shell, vertical, params = {}) {
    const {St, Clutter} = shell;
    const box = new St.BoxLayout(params);
    // GNOME Shell 48 names it `orientation`; 43–47 `vertical`.
    if ('orientation' in box)
        box.orientation = vertical ? Clutter.Orientation.VERTICAL : Clutter.Orientation.HORIZONTAL;
    else
        box.vertical = vertical;
    return box;
}

// The call on the lock screen: the app, "Incoming call", the caller; Answer, Decline, Silence;
// once answered, the call with its duration, Mute, Hold and End.
var CallCard = class CallCard {
    constructor(ui, shell) {
        const {St, Clutter} = shell;
        this._ui = ui;
        this._shell = shell;
        this.actor = makeBox(shell, true, {
            name: 'monkeycall-call-card', style_class: 'monkeycall-call-card', reactive: true,
            x_align: Clutter.ActorAlign.CENTER, y_align: Clutter.ActorAlign.END, x_expand: true, y_expand: true,
        });
        this.actor.accessible_role = shell.Atk?.Role?.PANEL ?? this.actor.accessible_role;
        const header = makeBox(shell, false, {style_class: 'monkeycall-card-header'});
        this._icon = new St.Icon({icon_size: 24, style_class: 'monkeycall-app-icon'});
        this._app = new St.Label({name: 'monkeycall-card-app', style_class: 'monkeycall-card-app', y_align: Clutter.ActorAlign.CENTER});
        header.add_child(this._icon);
        header.add_child(this._app);
        this._title = new St.Label({name: 'monkeycall-card-title', style_class: 'monkeycall-card-title'});
        this._caller = new St.Label({name: 'monkeycall-card-caller', style_class: 'monkeycall-card-caller'});
        this._handle = new St.Label({name: 'monkeycall-card-handle', style_class: 'monkeycall-card-handle'});
        this._buttons = makeBox(shell, false, {name: 'monkeycall-card-buttons', style_class: 'monkeycall-card-buttons'});
        for (const child of [header, this._title, this._caller, this._handle, this._buttons])
            this.actor.add_child(child);
        this._call = null;
        this._shape = '';
    }

    get appName() {
        return this._app.text;
    }

    get ringingUUID() {
        return this._call?.State === 'ringing' ? this._call.UUID : null;
    }

    show(call, app, details, others) {
        const {_} = this._ui;
        this._call = call;
        if (app.icon)
            this._icon.gicon = app.icon;
        else
            this._icon.icon_name = app.iconName;
        this._app.text = app.name;
        const name = call.CallerName || call.Handle;
        this._caller.text = details ? name : '';
        this._caller.visible = details;
        this._handle.text = details && call.CallerName && call.CallerName.toLowerCase() !== call.Handle.toLowerCase() ? call.Handle : '';
        this._handle.visible = this._handle.text !== '';
        this.tick();
        this._setButtons(call, others);
    }

    tick() {
        const {_} = this._ui;
        const call = this._call;
        if (!call)
            return;
        if (call.State === 'ringing')
            this._title.text = call.HasVideo ? _('Incoming video call') : _('Incoming call');
        else if (call.State === 'held')
            this._title.text = `${this._ui._duration(call)} · ${this._ui._C('button', 'Hold')}`.replace(/^ · /, '');
        else
            this._title.text = this._ui._duration(call) || '…';
    }

    // The buttons for the call's state; made anew only when the set changes, so that keyboard
    // focus stays where it is on each tick.
    _setButtons(call, others) {
        const ui = this._ui;
        const C = text => ui._C('button', text);
        const up = others.filter(c => UP_STATES.includes(c.State));
        let buttons;
        if (call.State === 'ringing') {
            buttons = up.length === 0
                ? [['answer', C('Answer'), () => ui._act('AnswerCall', call.UUID), 'monkeycall-answer']]
                : [...(up.every(c => c.SupportsHolding)
                    ? [['hold-and-answer', C('Hold & Answer'), () => ui._act('AnswerCall', call.UUID), 'monkeycall-answer']] : []),
                ['end-and-answer', C('End & Answer'), () => ui._endAndAnswer(call), 'monkeycall-answer']];
            buttons.push(['decline', C('Decline'), () => ui._act('EndCall', call.UUID), 'monkeycall-end']);
            if (!call.Silenced)
                buttons.push(['silence', C('Silence'), () => ui._silence(call), '']);
        } else {
            buttons = [[call.Muted ? 'unmute' : 'mute', C(call.Muted ? 'Unmute' : 'Mute'), () => ui._act('SetMuted', call.UUID, !call.Muted), '']];
            if (call.SupportsHolding)
                buttons.push([call.OnHold ? 'resume' : 'hold', C(call.OnHold ? 'Resume' : 'Hold'), () => ui._act('SetHeld', call.UUID, !call.OnHold), '']);
            buttons.push(['end', C('Hang Up'), () => ui._act('EndCall', call.UUID), 'monkeycall-end']);
        }
        const shape = `${call.UUID} ${buttons.map(b => b[0]).join(' ')}`;
        if (shape === this._shape)
            return;
        this._shape = shape;
        this._buttons.destroy_all_children();
        for (const [id, label, onClick, style] of buttons) {
            const button = makeButton(this._shell, label, onClick, style);
            button.name = `monkeycall-${id}`;
            this._buttons.add_child(button);
        }
    }

    destroy() {
        this.actor.destroy();
        this._call = null;
    }
};

// The call in the top bar: a phone icon and the duration (muted, held), and a menu with the
// caller and the app, Mute, Hold, End, Show Call, and the other call with Switch.
var CallIndicator = class CallIndicator {
    constructor(ui, shell) {
        const {St, Clutter, PanelMenu} = shell;
        this._ui = ui;
        this._shell = shell;
        this.button = new PanelMenu.Button(0.0, 'MonkeyCall', false);
        this.button.name = 'monkeycall-indicator';
        const box = makeBox(shell, false, {style_class: 'panel-status-menu-box'});
        this._icon = new St.Icon({icon_name: 'call-start-symbolic', style_class: 'system-status-icon'});
        this._label = new St.Label({name: 'monkeycall-indicator-label', y_align: Clutter.ActorAlign.CENTER});
        box.add_child(this._icon);
        box.add_child(this._label);
        this.button.add_child(box);
        this._call = null;
        this._shape = '';
    }

    show(call, app, others) {
        this._call = call;
        this._app = app;
        this._others = others;
        this.tick();
        this._setMenu();
    }

    tick() {
        const call = this._call;
        if (!call)
            return;
        const C = text => this._ui._C('button', text);
        const parts = [this._ui._duration(call)];
        if (call.Muted)
            parts.push(this._ui._('muted'));
        if (call.OnHold)
            parts.push(C('Hold'));
        this._label.text = parts.filter(p => p).join(' · ');
        this._icon.icon_name = call.Muted ? 'microphone-disabled-symbolic' : 'call-start-symbolic';
        this.button.accessible_name = `MonkeyCall: ${call.CallerName || call.Handle} ${this._label.text}`;
    }

    // The menu, made anew only when what it offers changes.
    _setMenu() {
        const {PopupMenu} = this._shell;
        const ui = this._ui, call = this._call;
        const C = text => ui._C('button', text);
        const shape = JSON.stringify([call.UUID, call.CallerName, call.Handle, call.Muted, call.OnHold, call.SupportsHolding,
            this._app.name, this._others.map(([c, a]) => [c.UUID, c.CallerName, c.Handle, c.State, a.name])]);
        if (shape === this._shape)
            return;
        this._shape = shape;
        const menu = this.button.menu;
        menu.removeAll();
        const who = new PopupMenu.PopupMenuItem(`${call.CallerName || call.Handle} · ${this._app.name}`, {reactive: false});
        who.actor.name = 'monkeycall-menu-caller';
        menu.addMenuItem(who);
        const item = (id, label, onClick) => {
            const entry = new PopupMenu.PopupMenuItem(label);
            entry.actor.name = `monkeycall-menu-${id}`;
            entry.actor.accessible_name = label;
            entry.connect('activate', onClick);
            menu.addMenuItem(entry);
        };
        item(call.Muted ? 'unmute' : 'mute', C(call.Muted ? 'Unmute' : 'Mute'), () => ui._act('SetMuted', call.UUID, !call.Muted));
        if (call.SupportsHolding)
            item(call.OnHold ? 'resume' : 'hold', C(call.OnHold ? 'Resume' : 'Hold'), () => ui._act('SetHeld', call.UUID, !call.OnHold));
        item('end', C('Hang Up'), () => ui._act('EndCall', call.UUID));
        item('show-call', C('Show Call'), () => ui._showCall(call));
        for (const [other, app] of this._others) {
            menu.addMenuItem(new PopupMenu.PopupSeparatorMenuItem());
            const line = new PopupMenu.PopupMenuItem(`${other.CallerName || other.Handle} · ${app.name}`, {reactive: false});
            menu.addMenuItem(line);
            item(`switch-${other.UUID}`, ui._('Switch'), () => ui._act('SetHeld', other.UUID, false));
        }
    }

    destroy() {
        this.button.destroy();
        this._call = null;
    }
};
