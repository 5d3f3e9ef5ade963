/* A MonkeyCall provider in C: the smallest VOIP app on GLib's GDBus.
 *
 * Everything it says to the service goes through bindings that gdbus-codegen
 * generates from the contract, dbus/org.monkeycall.Telephony1.xml (see the
 * Makefile); C, Vala, GTK and Qt-on-GLib apps adopt MonkeyCall the same way.
 *
 * - registers with the service (Manager.RegisterProvider), starting it by D-Bus
 *   activation when it is installed but not running;
 * - reports an incoming call when asked to (Provider.ReportNewIncomingCall): it rings;
 * - fulfils every action the user asks for (the Provider's PerformAction signal ->
 *   FulfillAction): answer, end, hold, mute, DTMF; an outgoing call ("start", from
 *   `monkeycall dial`) then starts connecting and connects, as a network would;
 * - follows each of its calls' State through the Call object's properties;
 * - with --one-call, exits 0 once its first call has ended.
 *
 * usage: monkeycall-c-provider [--address BUS] [--name NAME] [--incoming HANDLE] [--one-call]
 */
#include <stdio.h>
#include <string.h>

#include <gio/gio.h>

#include "monkeycall-generated.h"

#define SERVICE "org.monkeycall.Telephony1"
#define ROOT "/org/monkeycall/Telephony1"
#define PROVIDER_INTERFACE SERVICE ".Provider"

typedef struct {
    GMainLoop *loop;
    GDBusConnection *bus;
    MonkeyCallTelephony1Provider *provider;
    gchar *provider_path;
    GHashTable *calls; /* call UUID -> MonkeyCallTelephony1Call proxy */
    gboolean one_call;
    int status;
} App;

/* /org/monkeycall/Telephony1/Call/ and the UUID's 32 hex digits. */
static gchar *call_path(const gchar *uuid) {
    GString *path = g_string_new(ROOT "/Call/");
    for (const gchar *c = uuid; *c; c++)
        if (*c != '-') g_string_append_c(path, g_ascii_tolower(*c));
    return g_string_free(path, FALSE);
}

static void on_state(MonkeyCallTelephony1Call *call, GParamSpec *pspec, App *app) {
    const gchar *uuid = monkey_call_telephony1_call_get_uuid(call);
    const gchar *state = monkey_call_telephony1_call_get_state(call);
    if (state == NULL) return;
    printf("state %s %s\n", uuid, state);
    if (strcmp(state, "ended") == 0) {
        if (app->one_call) {
            app->status = 0;
            g_main_loop_quit(app->loop);
        }
        g_hash_table_remove(app->calls, uuid); /* drops the proxy: no more signals from it */
    }
}

/* A proxy on the call's object: its properties, kept up to date by PropertiesChanged,
 * which the service sends to the provider that owns the call. */
static void watch_call(App *app, const gchar *uuid, const gchar *path) {
    GError *error = NULL;
    MonkeyCallTelephony1Call *call = monkey_call_telephony1_call_proxy_new_sync(
        app->bus, G_DBUS_PROXY_FLAGS_NONE, SERVICE, path, NULL, &error);
    if (call == NULL) {
        printf("cannot follow call %s: %s\n", uuid, error->message);
        g_error_free(error);
        return;
    }
    g_hash_table_replace(app->calls, g_strdup(uuid), call);
    g_signal_connect(call, "notify::state", G_CALLBACK(on_state), app);
    on_state(call, NULL, app);
}

typedef struct {
    App *app;
    gchar *uuid;
    gboolean connected;
} Progress;

/* An outgoing call's progress, as the network would report it. */
static gboolean report_progress(gpointer data) {
    Progress *progress = data;
    App *app = progress->app;
    GError *error = NULL;
    gboolean ok = progress->connected
        ? monkey_call_telephony1_provider_call_report_outgoing_call_connected_sync(app->provider, progress->uuid, 0, NULL, &error)
        : monkey_call_telephony1_provider_call_report_outgoing_call_started_connecting_sync(app->provider, progress->uuid, 0, NULL, &error);
    if (!ok) { /* the user hung up meanwhile */
        printf("call %s is over: %s\n", progress->uuid, error->message);
        g_error_free(error);
    } else if (!progress->connected) {
        printf("connecting %s\n", progress->uuid);
        progress->connected = TRUE;
        return G_SOURCE_CONTINUE;
    } else {
        printf("connected %s\n", progress->uuid);
    }
    g_free(progress->uuid);
    g_free(progress);
    return G_SOURCE_REMOVE;
}

/* The user acted (a notification's button, `monkeycall answer`, CallController): do it, then say so. */
static void on_perform_action(MonkeyCallTelephony1Provider *provider, const gchar *action, const gchar *kind,
                              const gchar *uuid, GVariant *args, App *app) {
    printf("action %s %s\n", kind, uuid);
    GError *error = NULL;
    GVariant *info = g_variant_new("a{sv}", NULL);
    if (!monkey_call_telephony1_provider_call_fulfill_action_sync(provider, action, info, NULL, &error)) {
        printf("could not fulfil %s: %s\n", kind, error->message);
        g_error_free(error);
        return;
    }
    if (strcmp(kind, "start") == 0) {
        gchar *path = call_path(uuid);
        watch_call(app, uuid, path);
        g_free(path);
        Progress *progress = g_new0(Progress, 1);
        progress->app = app;
        progress->uuid = g_strdup(uuid);
        g_timeout_add(500, report_progress, progress);
    }
}

static void on_timed_out(MonkeyCallTelephony1Provider *provider, const gchar *action, const gchar *kind, const gchar *uuid, App *app) {
    printf("timed out %s %s\n", kind, uuid);
}

static void on_audio_on(MonkeyCallTelephony1Provider *provider, App *app) { printf("audio on\n"); }
static void on_audio_off(MonkeyCallTelephony1Provider *provider, App *app) { printf("audio off\n"); }
static void on_reset(MonkeyCallTelephony1Provider *provider, App *app) { printf("reset: every call has ended\n"); }

/* DidBegin may follow RegisterProvider's reply at once, before a proxy on the new object could
 * listen: it is subscribed to on the connection, before registering, for any provider path. */
static void on_did_begin(GDBusConnection *bus, const gchar *sender, const gchar *path, const gchar *interface,
                         const gchar *signal, GVariant *parameters, gpointer data) {
    App *app = data;
    if (g_strcmp0(path, app->provider_path) == 0) printf("began\n");
}

static void on_service_vanished(GDBusConnection *bus, const gchar *name, gpointer data) {
    App *app = data;
    printf("the service went away; every call has ended\n");
    app->status = 1;
    g_main_loop_quit(app->loop);
}

static gboolean report_incoming(App *app, const gchar *handle) {
    gchar *uuid = g_uuid_string_random();
    GVariantBuilder update;
    g_variant_builder_init(&update, G_VARIANT_TYPE_VARDICT);
    g_variant_builder_add(&update, "{sv}", "Handle", g_variant_new_string(handle));
    g_variant_builder_add(&update, "{sv}", "HandleType", g_variant_new_string("generic"));
    g_variant_builder_add(&update, "{sv}", "LocalizedCallerName", g_variant_new_string(handle));
    gchar *path = NULL;
    GError *error = NULL;
    gboolean ok = monkey_call_telephony1_provider_call_report_new_incoming_call_sync(
        app->provider, uuid, g_variant_builder_end(&update), &path, NULL, &error);
    if (ok) {
        printf("ringing %s from %s\n", uuid, handle);
        watch_call(app, uuid, path);
    } else {
        /* Do Not Disturb, the block list: the call was refused (and is in Recents). */
        gchar *remote = g_dbus_error_get_remote_error(error);
        printf("refused: %s: %s\n", remote ? remote : "", error->message);
        g_free(remote);
        g_error_free(error);
    }
    g_free(path);
    g_free(uuid);
    return ok;
}

int main(int argc, char **argv) {
    gchar *address = NULL, *name = NULL, *incoming = NULL;
    gboolean one_call = FALSE;
    GOptionEntry entries[] = {
        {"address", 0, 0, G_OPTION_ARG_STRING, &address, "Bus address (default: the session bus)", "ADDRESS"},
        {"name", 0, 0, G_OPTION_ARG_STRING, &name, "The name the user sees (default: CPhone)", "NAME"},
        {"incoming", 0, 0, G_OPTION_ARG_STRING, &incoming, "Report an incoming call from HANDLE", "HANDLE"},
        {"one-call", 0, 0, G_OPTION_ARG_NONE, &one_call, "Exit 0 once the first call has ended", NULL},
        {NULL},
    };
    GError *error = NULL;
    GOptionContext *context = g_option_context_new("- a MonkeyCall provider in C");
    g_option_context_add_main_entries(context, entries, NULL);
    if (!g_option_context_parse(context, &argc, &argv, &error)) {
        g_printerr("%s\n", error->message);
        return 2;
    }
    g_option_context_free(context);
    setvbuf(stdout, NULL, _IOLBF, 0); /* one line at a time, also into a pipe */

    App app = {.loop = g_main_loop_new(NULL, FALSE), .one_call = one_call, .status = 0,
               .calls = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_object_unref)};
    app.bus = address
        ? g_dbus_connection_new_for_address_sync(address,
              G_DBUS_CONNECTION_FLAGS_AUTHENTICATION_CLIENT | G_DBUS_CONNECTION_FLAGS_MESSAGE_BUS_CONNECTION, NULL, NULL, &error)
        : g_bus_get_sync(G_BUS_TYPE_SESSION, NULL, &error);
    if (app.bus == NULL) {
        g_printerr("no session bus: %s\n", error->message);
        return 1;
    }
    g_dbus_connection_signal_subscribe(app.bus, SERVICE, PROVIDER_INTERFACE, "DidBegin", NULL, NULL,
                                       G_DBUS_SIGNAL_FLAGS_NONE, on_did_begin, &app, NULL);

    /* The first call to the service starts it when it is installed (D-Bus activation). */
    MonkeyCallTelephony1Manager *manager = monkey_call_telephony1_manager_proxy_new_sync(
        app.bus, G_DBUS_PROXY_FLAGS_DO_NOT_LOAD_PROPERTIES, SERVICE, ROOT, NULL, &error);
    GVariantBuilder configuration;
    g_variant_builder_init(&configuration, G_VARIANT_TYPE_VARDICT);
    g_variant_builder_add(&configuration, "{sv}", "Name", g_variant_new_string(name ? name : "CPhone"));
    const gchar *types[] = {"generic", "phone-number", NULL};
    g_variant_builder_add(&configuration, "{sv}", "SupportedHandleTypes", g_variant_new_strv(types, -1));
    if (manager == NULL || !monkey_call_telephony1_manager_call_register_provider_sync(
                               manager, g_variant_builder_end(&configuration), &app.provider_path, NULL, &error)) {
        g_printerr("cannot register with MonkeyCall: %s\n"
                   "Is monkeycalld running? Start it with scripts/run, or install MonkeyCall so that it starts by itself.\n",
                   error->message);
        return 1;
    }
    printf("registered as %s at %s\n", name ? name : "CPhone", app.provider_path);

    app.provider = monkey_call_telephony1_provider_proxy_new_sync(
        app.bus, G_DBUS_PROXY_FLAGS_DO_NOT_LOAD_PROPERTIES, SERVICE, app.provider_path, NULL, &error);
    if (app.provider == NULL) {
        g_printerr("%s\n", error->message);
        return 1;
    }
    g_signal_connect(app.provider, "perform-action", G_CALLBACK(on_perform_action), &app);
    g_signal_connect(app.provider, "timed-out-performing-action", G_CALLBACK(on_timed_out), &app);
    g_signal_connect(app.provider, "did-activate-audio-session", G_CALLBACK(on_audio_on), &app);
    g_signal_connect(app.provider, "did-deactivate-audio-session", G_CALLBACK(on_audio_off), &app);
    g_signal_connect(app.provider, "did-reset", G_CALLBACK(on_reset), &app);
    /* The provider lives as long as this connection: when the service goes, so do its calls. */
    g_bus_watch_name_on_connection(app.bus, SERVICE, G_BUS_NAME_WATCHER_FLAGS_NONE, NULL, on_service_vanished, &app, NULL);

    if (incoming && !report_incoming(&app, incoming) && one_call) return 1;
    g_main_loop_run(app.loop);

    g_hash_table_destroy(app.calls);
    g_object_unref(app.provider);
    g_object_unref(manager);
    g_object_unref(app.bus);
    return app.status;
}
