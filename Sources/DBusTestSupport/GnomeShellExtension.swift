import Foundation

/// The test-only GNOME Shell 43 extension that `GnomeShellStage` writes into its temporary folder
/// (`share/gnome-shell/extensions/UUID`, first in the shell's XDG_DATA_DIRS) and enables through
/// the stage's settings.
///
/// GNOME Shell 43 answers `org.gnome.Shell.Eval` and `org.gnome.Shell.Screenshot` only in unsafe
/// mode, and has no flag for it: an extension that sets `global.context.unsafe_mode` is the way in.
/// The same extension removes the notifications the shell posts at start (the unsafe-mode warning
/// and, as root, "Logged in as a privileged user"), hides the overview the session starts in, says
/// on its standard output when all that is done, and gives the tests `global.monkeycallStage`: the
/// shell's state read back as JSON and a virtual pointer, called through Eval.
///
/// It reads shell internals (`Main.messageTray._banner`, the lock screen's `_notificationsBox`),
/// which change between versions: it is written for 43 (Debian 12), and legacy `imports` modules
/// end with 44 (45 loads extensions as ES modules).
enum GnomeShellExtension {
    static let uuid = "monkeycall-test-stage@monkeycall.invalid"

    /// What the extension prints once the shell is ready for a test.
    static let readyLine = "monkeycall-stage: ready"

    /// `session-modes`: kept on while the screen is locked (`unlock-dialog`), or Eval would stop
    /// answering there.
    static let metadata = """
        {
          "uuid": "\(uuid)",
          "name": "MonkeyCall test stage",
          "description": "For MonkeyCall's tests only: unsafe mode, no start-up notifications, state read back for Eval.",
          "shell-version": ["43"],
          "session-modes": ["user", "unlock-dialog"]
        }
        """

    static let source = #"""
        // MonkeyCall's GNOME Shell test stage: written by DBusTestSupport's GnomeShellStage into a
        // temporary folder, for tests only.
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

        const URGENCIES = ['low', 'normal', 'high', 'critical'];
        const READY_LINE = 'READY_LINE_PLACEHOLDER';

        function iconName(gicon) {
            return gicon ? gicon.to_string() : null;
        }

        // Where an actor is on the screen, in stage (pointer) coordinates; `placed` false while
        // it has no place yet (NaN before its first allocation).
        function frame(actor) {
            const [x, y] = actor.get_transformed_position();
            const [width, height] = actor.get_transformed_size();
            const placed = [x, y, width, height].every(Number.isFinite);
            return placed ? { x, y, width, height, placed } : { x: 0, y: 0, width: 0, height: 0, placed };
        }

        // The visible labels' texts under `actor`, in order, and the first icon's name.
        function contents(actor) {
            const labels = [];
            let icon = null;
            const walk = a => {
                if (!a.visible)
                    return;
                if (a instanceof St.Label)
                    labels.push(a.text);
                if (a instanceof St.Icon && icon === null)
                    icon = iconName(a.gicon) ?? a.icon_name;
                a.get_children().forEach(walk);
            };
            walk(actor);
            return { labels, icon };
        }

        var Stage = class {
            // Every notification the message tray holds, by source.
            notifications() {
                return Main.messageTray.getSources().flatMap(source => source.notifications.map(n => ({
                    source: source.title,
                    title: n.title,
                    body: n.bannerBodyText ?? '',
                    actions: n.actions.map(a => a.label),
                    urgency: URGENCIES[n.urgency] ?? `${n.urgency}`,
                    resident: n.resident,
                    icon: iconName(n.gicon),
                    // What the shell plays each time it shows the notification (sound-name or
                    // sound-file; 43 reads no suppress-sound).
                    sound: n._soundName ?? n._soundFile?.get_path() ?? null,
                })));
            }

            // The banner on screen (GNOME shows one at a time), as drawn: null when none.
            // `settled`: shown, no longer sliding in, its buttons grown to full size.
            banner() {
                const tray = Main.messageTray;
                const banner = tray._banner;
                if (!banner || !banner.notification)
                    return null;
                const buttons = banner._buttonBox ? banner._buttonBox.get_children() : [];
                const body = banner.expanded && banner._expandedLabel ? banner._expandedLabel : banner.bodyLabel;
                const moving = tray._bannerBin.get_transition('y') || tray._bannerBin.get_transition('opacity') ||
                    banner._actionBin.get_transition('scale-y');
                const shownButtons = buttons.filter(b => b.visible).map(b => ({ label: b.label, ...frame(b) }));
                const place = frame(banner);
                return {
                    title: banner.titleLabel.text,
                    body: body.text,
                    icon: iconName(banner._iconBin.child?.gicon ?? null),
                    urgency: URGENCIES[banner.notification.urgency] ?? `${banner.notification.urgency}`,
                    expanded: banner.expanded,
                    // Buttons are drawn only once the banner is expanded (hovered, or urgent).
                    settled: tray._notificationState === MessageTray.State.SHOWN && !moving &&
                        place.placed && (!banner.expanded || (banner._actionBin.scale_y === 1 && shownButtons.every(b => b.placed))),
                    buttons: shownButtons,
                    frame: place,
                    // The title, a place to click the banner's body (its default action).
                    titleFrame: frame(banner.titleLabel),
                };
            }

            // The screen shield: whether it is locked, the session mode, and what the lock
            // screen lists (one entry per app: its labels, its icon, and whether it is critical).
            lockScreen() {
                const shield = Main.screenShield;
                const box = shield._dialog?._notificationsBox?._notificationBox;
                const entries = box && shield.locked
                    ? box.get_children().filter(c => c.visible).map(c => ({
                        ...contents(c),
                        critical: c.has_style_class_name('critical'),
                    }))
                    : [];
                return { locked: shield.locked, mode: Main.sessionMode.currentMode, entries };
            }

            lock() {
                Main.screenShield.lock(false);
                return true;
            }

            // A pointer device of its own, made once: its events are real input events.
            _pointer() {
                if (!this._device) {
                    const seat = Clutter.get_default_backend().get_default_seat();
                    this._device = seat.create_virtual_device(Clutter.InputDeviceType.POINTER_DEVICE);
                }
                return this._device;
            }

            movePointer(x, y) {
                this._pointer().notify_absolute_motion(GLib.get_monotonic_time(), x, y);
                return true;
            }

            // Where the pointer is, and the button under it: its label (null for the banner's
            // body, itself a button), whether it shows the hover, whether it is the banner.
            pointer() {
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
                Main.overview.show();
                Main.overview.searchEntry.set_text(text);
                return true;
            }

            // The overview's search results as drawn: each provider's app and its results' names,
            // descriptions and places (the system's own providers too).
            searchResults() {
                const view = Main.overview._overview.controls._searchController._searchResults;
                return view._providers.filter(p => p.display && p.display.visible).map(p => ({
                    app: p.appInfo ? p.appInfo.get_name() : null,
                    results: Object.values(p.display._resultDisplays)
                        .filter(d => d.visible && d.get_parent() !== null)
                        .map(d => ({ name: d.metaInfo.name, description: d.metaInfo.description ?? '', ...frame(d) })),
                }));
            }

            // The primary button pressed and released where the pointer is.
            click() {
                const pointer = this._pointer();
                const now = GLib.get_monotonic_time();
                pointer.notify_button(now, Clutter.BUTTON_PRIMARY, Clutter.ButtonState.PRESSED);
                pointer.notify_button(now + 50000, Clutter.BUTTON_PRIMARY, Clutter.ButtonState.RELEASED);
                return true;
            }
        };

        class Extension {
            enable() {
                global.context.unsafe_mode = true;
                if (global.monkeycallStage)
                    return;
                global.monkeycallStage = new Stage();
                if (Main.layoutManager._startingUp)
                    Main.layoutManager.connect('startup-complete', () => this._settle());
                else
                    this._settle();
            }

            // Once every other start-up handler has run (the privileged-user warning is posted in
            // one): the overview the session starts in hidden, the start-up notifications gone.
            _settle() {
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

            // Kept on: the tests need Eval for as long as the shell runs.
            disable() {
            }
        }

        function init() {
            return new Extension();
        }
        """#.replacingOccurrences(of: "READY_LINE_PLACEHOLDER", with: readyLine)

    /// Writes the extension under `dataDirectory`, a folder of the shell's `XDG_DATA_DIRS`: a
    /// system extension, for which the shell asks extensions.gnome.org for no updates (it does for
    /// the user's own, where the Extensions app is installed).
    static func install(dataDirectory: URL) throws {
        let folder = dataDirectory.appendingPathComponent("gnome-shell/extensions/\(uuid)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try writeClosingOnExec(metadata, to: folder.appendingPathComponent("metadata.json"))
        try writeClosingOnExec(source, to: folder.appendingPathComponent("extension.js"))
    }
}
