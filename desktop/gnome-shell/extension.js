// MonkeyCall for GNOME Shell 45 and later: the ES module entry point. The logic is monkeycall.js,
// shared with GNOME Shell 43–44 (extension-legacy.js).
import St from 'gi://St';
import Clutter from 'gi://Clutter';
import Gio from 'gi://Gio';
import GLib from 'gi://GLib';
import Shell from 'gi://Shell';
import Gettext from 'gettext';
import * as Main from 'resource:///org/gnome/shell/ui/main.js';
import * as PanelMenu from 'resource:///org/gnome/shell/ui/panelMenu.js';
import * as PopupMenu from 'resource:///org/gnome/shell/ui/popupMenu.js';
import {Extension} from 'resource:///org/gnome/shell/extensions/extension.js';
import {CallUI} from './monkeycall.js';

export default class MonkeyCallExtension extends Extension {
    enable() {
        this._ui = new CallUI({St, Clutter, Gio, GLib, Shell, Main, PanelMenu, PopupMenu, Gettext}, this.metadata);
        this._ui.enable();
    }

    disable() {
        this._ui.disable();
        this._ui = null;
    }
}
