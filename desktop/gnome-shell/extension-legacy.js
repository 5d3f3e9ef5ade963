// MonkeyCall for GNOME Shell 43–44: the legacy entry point (`imports`). The logic is monkeycall.js,
// shared with GNOME Shell 45 and later (extension.js).
/* exported init */
const {St, Clutter, Gio, GLib, Shell} = imports.gi;
const Main = imports.ui.main;
const PanelMenu = imports.ui.panelMenu;
const PopupMenu = imports.ui.popupMenu;
const Gettext = imports.gettext;
const Me = imports.misc.extensionUtils.getCurrentExtension();
const {CallUI} = Me.imports.monkeycall;

class MonkeyCallExtension {
    enable() {
        this._ui = new CallUI({St, Clutter, Gio, GLib, Shell, Main, PanelMenu, PopupMenu, Gettext}, Me.metadata);
        this._ui.enable();
    }

    disable() {
        this._ui.disable();
        this._ui = null;
    }
}

function init() {
    return new MonkeyCallExtension();
}
