import Foundation

/// The test-only GNOME Shell extension that `GnomeShellStage` writes into its temporary folder
/// (`share/gnome-shell/extensions/UUID`, first in the shell's XDG_DATA_DIRS) and enables through
/// the stage's settings.
///
/// GNOME Shell answers `org.gnome.Shell.Eval` and `org.gnome.Shell.Screenshot` only in unsafe
/// mode, and 43 has no flag for it: an extension that sets `global.context.unsafe_mode` is the way
/// in. The same extension removes the notifications the shell posts at start (the unsafe-mode
/// warning and, as root, "Logged in as a privileged user"), hides the overview the session starts
/// in, says on its standard output when all that is done, and gives the tests
/// `global.monkeycallStage`: the shell's state read back as JSON and a virtual pointer, called
/// through Eval.
///
/// One body of JavaScript (`stage`) serves both shells the stage runs; what differs is the entry
/// point around it. 43 loads legacy `imports` scripts with `init()`; 45 and later load ES modules
/// whose default export extends `Extension`. The body reads shell internals
/// (`Main.messageTray._banner`, the lock screen's `_notificationsBox`, the overview's search
/// results); where 48's differ from 43's (the banner is a `NotificationMessage` with a header that
/// names the source, its body label has another name, a notification's sound is an object), it
/// branches on the major version the entry point passes.
enum GnomeShellExtension {
    static let uuid = "monkeycall-test-stage@monkeycall.invalid"

    /// What the extension prints once the shell is ready for a test.
    static let readyLine = "monkeycall-stage: ready"

    /// `session-modes`: kept on while the screen is locked (`unlock-dialog`), or Eval would stop
    /// answering there. `shell-version`: the one shell this copy is written for.
    static func metadata(major: Int) -> String {
        """
        {
          "uuid": "\(uuid)",
          "name": "MonkeyCall test stage",
          "description": "For MonkeyCall's tests only: unsafe mode, no start-up notifications, state read back for Eval.",
          "shell-version": ["\(major)"],
          "session-modes": ["user", "unlock-dialog"]
        }
        """
    }

    /// The extension's `extension.js` for the shell of major version `major`: its entry point and
    /// the shared body.
    static func source(major: Int) -> String {
        let entry = major >= 45 ? moduleEntry : legacyEntry
        return entry.replacingOccurrences(of: "STAGE_PLACEHOLDER", with: stage)
            .replacingOccurrences(of: "MAJOR_PLACEHOLDER", with: String(major))
            .replacingOccurrences(of: "READY_LINE_PLACEHOLDER", with: readyLine)
    }

    /// 43 (and 44): a legacy script, `init()` returning the extension.
    static let legacyEntry = #"""
        // MonkeyCall's GNOME Shell test stage: written by DBusTestSupport's GnomeShellStage into a
        // temporary folder, for tests only. GNOME Shell 43's entry point (legacy imports).
        const { Clutter, GLib, St } = imports.gi;
        const Main = imports.ui.main;
        const MessageTray = imports.ui.messageTray;

        // GNOME Shell 43 starts ibus-daemon with GLib.spawn_async and a JavaScript child-setup
        // function, which runs in the forked child of a multi-threaded process: now and then the
        // child deadlocks before exec, and the shell's main thread waits for it for ever (seen
        // here in about one start in four; 44 made the child setup C). A session that systemd
        // manages starts ibus as a unit instead, and this one needs no input method: no ibus.
        // Patched when this file is loaded, during the shell's start-up, before its first spawn.
        imports.misc.ibusManager.IBusManager.prototype._spawn = function () {};

        STAGE_PLACEHOLDER

        class Extension {
            enable() {
                enableStage({ Clutter, GLib, St, Main, MessageTray, major: MAJOR_PLACEHOLDER });
            }

            // Kept on: the tests need Eval for as long as the shell runs.
            disable() {
            }
        }

        function init() {
            return new Extension();
        }
        """#

    /// 45 and later: an ES module whose default export extends `Extension`. (No ibus patch: the
    /// child setup that deadlocked is C since 44, and Debian 13's stage root has no ibus.)
    static let moduleEntry = #"""
        // MonkeyCall's GNOME Shell test stage: written by DBusTestSupport's GnomeShellStage into a
        // temporary folder, for tests only. The entry point of GNOME Shell 45 and later (an ES module).
        import Clutter from 'gi://Clutter';
        import GLib from 'gi://GLib';
        import St from 'gi://St';
        import * as Main from 'resource:///org/gnome/shell/ui/main.js';
        import * as MessageTray from 'resource:///org/gnome/shell/ui/messageTray.js';
        import { Extension } from 'resource:///org/gnome/shell/extensions/extension.js';

        STAGE_PLACEHOLDER

        export default class MonkeyCallTestStage extends Extension {
            enable() {
                enableStage({ Clutter, GLib, St, Main, MessageTray, major: MAJOR_PLACEHOLDER });
            }

            // Kept on: the tests need Eval for as long as the shell runs.
            disable() {
            }
        }
        """#

    /// The body both entry points share: `enableStage(shell)`, given the shell's modules and its
    /// major version.
    static let stage = #"""
        const URGENCIES = ['low', 'normal', 'high', 'critical'];
        const READY_LINE = 'READY_LINE_PLACEHOLDER';

        // The stage's reading of one shell: its modules (Clutter, GLib, St, Main, MessageTray) and
        // its major version, for the internals that differ.
        class Stage {
            constructor(shell) {
                this._shell = shell;
            }

            _iconName(gicon) {
                return gicon ? gicon.to_string() : null;
            }

            // Where an actor is on the screen, in stage (pointer) coordinates; `placed` false while
            // it has no place yet (NaN before its first allocation).
            _frame(actor) {
                const [x, y] = actor.get_transformed_position();
                const [width, height] = actor.get_transformed_size();
                const placed = [x, y, width, height].every(Number.isFinite);
                return placed ? { x, y, width, height, placed } : { x: 0, y: 0, width: 0, height: 0, placed };
            }

            // The visible labels' texts under `actor`, in order, and the first icon's name.
            _contents(actor) {
                const { St } = this._shell;
                const labels = [];
                let icon = null;
                const walk = a => {
                    if (!a.visible)
                        return;
                    if (a instanceof St.Label)
                        labels.push(a.text);
                    if (a instanceof St.Icon && icon === null)
                        icon = this._iconName(a.gicon) ?? a.icon_name;
                    a.get_children().forEach(walk);
                };
                walk(actor);
                return { labels, icon };
            }

            // Every notification the message tray holds, by source.
            notifications() {
                const { Main } = this._shell;
                return Main.messageTray.getSources().flatMap(source => source.notifications.map(n => {
                    // What the shell plays each time it shows the notification (sound-name or
                    // sound-file; neither 43 nor 48 reads suppress-sound): 43 keeps them on the
                    // notification, 48 in a MessageTray.Sound.
                    const sound = n.sound ?? n;
                    return {
                        source: source.title,
                        title: n.title,
                        // As sent: 43 keeps it as bannerBodyText, 48 as body.
                        body: n.bannerBodyText ?? n.body ?? '',
                        actions: n.actions.map(a => a.label),
                        urgency: URGENCIES[n.urgency] ?? `${n.urgency}`,
                        resident: n.resident,
                        icon: this._iconName(n.gicon),
                        sound: sound._soundName ?? sound._soundFile?.get_path() ?? null,
                    };
                }));
            }

            // The banner on screen (GNOME shows one at a time), as drawn: null when none.
            // `settled`: shown, no longer sliding in, its buttons grown to full size.
            banner() {
                const { Main, MessageTray, major } = this._shell;
                const tray = Main.messageTray;
                const banner = tray._banner;
                if (!banner || !banner.notification)
                    return null;
                const buttons = banner._buttonBox ? banner._buttonBox.get_children() : [];
                const shownButtons = buttons.filter(b => b.visible).map(b => ({ label: b.label, ...this._frame(b) }));
                let body, icon, source = null, sourceIcon = null, moving;
                if (major >= 46) {
                    // A NotificationMessage: a header (the source's icon and name, the time), the
                    // notification's icon when it has one, title, and the body on one line (48
                    // draws line breaks as spaces), which grows to a few lines when expanded.
                    body = banner._bodyLabel.text;
                    icon = banner._icon.visible ? this._iconName(banner._icon.gicon) : null;
                    const header = banner._header;
                    const headerIcon = header.get_first_child();
                    sourceIcon = this._iconName(headerIcon.gicon);
                    source = header.get_children().flatMap(c => this._contents(c).labels)[0] ?? null;
                    moving = banner._bodyBin.get_transition('@layout.expansion');
                } else {
                    // 43's banner: no header; the body whole when expanded, else on one line.
                    body = (banner.expanded && banner._expandedLabel ? banner._expandedLabel : banner.bodyLabel).text;
                    icon = this._iconName(banner._iconBin.child?.gicon ?? null);
                    moving = null;
                }
                moving = moving || tray._bannerBin.get_transition('y') || tray._bannerBin.get_transition('opacity') ||
                    banner._actionBin.get_transition('scale-y');
                const place = this._frame(banner);
                return {
                    title: banner.titleLabel.text,
                    body,
                    icon,
                    source,
                    sourceIcon,
                    urgency: URGENCIES[banner.notification.urgency] ?? `${banner.notification.urgency}`,
                    expanded: banner.expanded,
                    // Buttons are drawn only once the banner is expanded (hovered, or urgent).
                    settled: tray._notificationState === MessageTray.State.SHOWN && !moving &&
                        place.placed && (!banner.expanded || (banner._actionBin.scale_y === 1 && shownButtons.every(b => b.placed))),
                    buttons: shownButtons,
                    frame: place,
                    // The title, a place to click the banner's body (its default action).
                    titleFrame: this._frame(banner.titleLabel),
                };
            }

            // The screen shield: whether it is locked, the session mode, and what the lock
            // screen lists (one entry per app: its labels, its icon, and whether it is critical).
            // 43 and 48 build the list alike (UnlockDialog's NotificationsBox).
            lockScreen() {
                const { Main } = this._shell;
                const shield = Main.screenShield;
                const box = shield._dialog?._notificationsBox?._notificationBox;
                const entries = box && shield.locked
                    ? box.get_children().filter(c => c.visible).map(c => ({
                        ...this._contents(c),
                        critical: c.has_style_class_name('critical'),
                    }))
                    : [];
                return { locked: shield.locked, mode: Main.sessionMode.currentMode, entries };
            }

            lock() {
                this._shell.Main.screenShield.lock(false);
                return true;
            }

            // A pointer device of its own, made once: its events are real input events.
            _pointer() {
                const { Clutter } = this._shell;
                if (!this._device) {
                    const seat = Clutter.get_default_backend().get_default_seat();
                    this._device = seat.create_virtual_device(Clutter.InputDeviceType.POINTER_DEVICE);
                }
                return this._device;
            }

            movePointer(x, y) {
                this._pointer().notify_absolute_motion(this._shell.GLib.get_monotonic_time(), x, y);
                return true;
            }

            // Where the pointer is, and the button under it: its label (null for the banner's
            // body, itself a button), whether it shows the hover, whether it is the banner.
            pointer() {
                const { Clutter, St, Main } = this._shell;
                const [x, y] = global.get_pointer();
                let actor = global.stage.get_actor_at_pos(Clutter.PickMode.REACTIVE, x, y);
                while (actor && !(actor instanceof St.Button))
                    actor = actor.get_parent();
                const banner = Main.messageTray._banner;
                return {
                    x, y,
                    button: actor?.label ?? null,
                    hover: actor?.hover ?? false,
                    banner: actor !== null && actor === banner,
                };
            }

            // The overview opened and `text` put in its search entry, as typed.
            search(text) {
                const { Main } = this._shell;
                Main.overview.show();
                Main.overview.searchEntry.set_text(text);
                return true;
            }

            // The overview's search results as drawn: each provider's app and its results' names,
            // descriptions and places (the system's own providers too). 43 and 48 keep them alike
            // (SearchResultsView's providers, each with its display's result actors).
            searchResults() {
                const { Main } = this._shell;
                const view = Main.overview._overview.controls._searchController._searchResults;
                return view._providers.filter(p => p.display && p.display.visible).map(p => ({
                    app: p.appInfo ? p.appInfo.get_name() : null,
                    results: Object.values(p.display._resultDisplays)
                        .filter(d => d.visible && d.get_parent() !== null)
                        .map(d => ({ name: d.metaInfo.name, description: d.metaInfo.description ?? '', ...this._frame(d) })),
                }));
            }

            // The primary button pressed and released where the pointer is.
            click() {
                const { Clutter, GLib } = this._shell;
                const pointer = this._pointer();
                const now = GLib.get_monotonic_time();
                pointer.notify_button(now, Clutter.BUTTON_PRIMARY, Clutter.ButtonState.PRESSED);
                pointer.notify_button(now + 50000, Clutter.BUTTON_PRIMARY, Clutter.ButtonState.RELEASED);
                return true;
            }
        }

        // Unsafe mode on, `global.monkeycallStage` made once, and the shell settled for a test.
        // The shell may enable the extension again (at each change of session mode): that is a
        // no-op beyond unsafe mode.
        function enableStage(shell) {
            global.context.unsafe_mode = true;
            if (global.monkeycallStage)
                return;
            global.monkeycallStage = new Stage(shell);
            const { Main } = shell;
            if (Main.layoutManager._startingUp)
                Main.layoutManager.connect('startup-complete', () => settle(shell));
            else
                settle(shell);
        }

        // Once every other start-up handler has run (the privileged-user warning is posted in
        // one): the overview the session starts in hidden, the start-up notifications gone. Every
        // source goes, whichever holds them: 43 posts the warnings to a source of their own, 48
        // to MessageTray.getSystemSource() (which is made anew when next asked for).
        function settle(shell) {
            const { GLib, Main } = shell;
            GLib.idle_add(GLib.PRIORITY_LOW, () => {
                const done = () => {
                    Main.messageTray.getSources().forEach(source => source.destroy());
                    print(READY_LINE);
                };
                if (Main.overview.visible) {
                    const id = Main.overview.connect('hidden', () => {
                        Main.overview.disconnect(id);
                        done();
                    });
                    Main.overview.hide();
                } else {
                    done();
                }
                return GLib.SOURCE_REMOVE;
            });
        }
        """#

    /// Writes the extension for the shell of major version `major` under `dataDirectory`, a folder
    /// of the shell's `XDG_DATA_DIRS`: a system extension, for which the shell asks
    /// extensions.gnome.org for no updates (it does for the user's own, where the Extensions app
    /// is installed).
    static func install(dataDirectory: URL, major: Int) throws {
        let folder = dataDirectory.appendingPathComponent("gnome-shell/extensions/\(uuid)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try writeClosingOnExec(metadata(major: major), to: folder.appendingPathComponent("metadata.json"))
        try writeClosingOnExec(source(major: major), to: folder.appendingPathComponent("extension.js"))
    }
}
