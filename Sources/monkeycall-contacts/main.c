/*
 * monkeycall-contacts: reads the user's GNOME address books (evolution-data-server,
 * through libebook) and streams their phone numbers and names to monkeycalld.
 *
 * monkeycalld starts it (Sources/AddressBook/EDSSource.swift) with a pipe on stdin,
 * one on stdout and one on stderr (what it says there goes to the daemon's log; the
 * loader's "error while loading shared libraries" and exit status 127 make the daemon
 * say that libebook's package is missing). libebook stays in this process: linking it
 * costs 10.5 MiB of RSS before any use and about 16 MiB with 1,000 contacts read
 * (docs/performance.md, "The address book"), and the daemon's idle goal is 24 MiB.
 *
 * Output, one line per change, fields separated by a tab, each field escaped
 * (\\ \t \n \r as two characters):
 *   eds up | eds down              org.gnome.evolution.dataserver.Sources5 has or lost its owner
 *   set SOURCE UID NAME TEL...     a contact added or modified (replaces what UID had); each TEL is
 *                                  its vCard TYPEs, comma separated, a 0x1F byte, and the number
 *   remove SOURCE UID              a contact removed
 *   drop SOURCE                    everything from SOURCE is gone (source removed or disabled, EDS stopped)
 *   ready SOURCE                   SOURCE's initial contents have all been sent
 *   error SOURCE TEXT              SOURCE could not be read (logged by the daemon)
 * It exits when stdin reaches its end (the daemon closed it or died) or stdout breaks.
 *
 * EDS is never started from here: the registry is opened when Sources5 appears on the
 * bus (a GNOME session starts it at login), and everything is dropped when it goes.
 * Idle, nothing here wakes: the GLib loop waits on the bus socket and stdin.
 */
#define GLIB_DISABLE_DEPRECATION_WARNINGS
#include <libebook/libebook.h>
#include <glib-unix.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

static const char *const sources_name = "org.gnome.evolution.dataserver.Sources5";

typedef struct {
    char *uid;                 /* the ESource's UID */
    GCancellable *cancellable; /* cancelled when the book is closed */
    EBookClient *client;
    EBookClientView *view;
} Book;

static GMainLoop *loop;
static ESourceRegistry *registry;
static GCancellable *registry_cancellable;
static GHashTable *books; /* source UID → Book */

/* ---- output ---- */

static void put_field(GString *line, const char *text) {
    g_string_append_c(line, '\t');
    for (const char *p = text ? text : ""; *p; p++) {
        switch (*p) {
        case '\\': g_string_append(line, "\\\\"); break;
        case '\t': g_string_append(line, "\\t"); break;
        case '\n': g_string_append(line, "\\n"); break;
        case '\r': g_string_append(line, "\\r"); break;
        default: g_string_append_c(line, *p);
        }
    }
}

static void emit(GString *line) {
    g_string_append_c(line, '\n');
    if (fwrite(line->str, 1, line->len, stdout) != line->len) exit(0); /* the daemon is gone */
    g_string_free(line, TRUE);
}

/* Written out at the end of each signal's batch, not per line. */
static void flush(void) {
    if (fflush(stdout) != 0) exit(0);
}

static GString *start_line(const char *kind, const char *source) {
    GString *line = g_string_new(kind);
    if (source) put_field(line, source);
    return line;
}

/* ---- books ---- */

static void emit_contact(const char *source, EContact *contact) {
    const char *uid = e_contact_get_const(contact, E_CONTACT_UID);
    if (!uid) return;
    const char *name = e_contact_get_const(contact, E_CONTACT_FULL_NAME);
    if (!name || !*name) name = e_contact_get_const(contact, E_CONTACT_ORG);
    GString *line = start_line("set", source);
    put_field(line, uid);
    put_field(line, name);
    /* Each number as TYPES 0x1F NUMBER: its vCard types, comma separated, give its label. */
    GList *tels = e_contact_get_attributes(contact, E_CONTACT_TEL);
    for (GList *t = tels; t; t = t->next) {
        EVCardAttribute *attribute = t->data;
        char *number = e_vcard_attribute_get_value(attribute);
        if (number && *number) {
            GString *field = g_string_new(NULL);
            for (GList *type = e_vcard_attribute_get_param(attribute, EVC_TYPE); type; type = type->next) {
                if (field->len) g_string_append_c(field, ',');
                for (const char *p = type->data; *p; p++) if (*p != '\x1f' && *p != ',') g_string_append_c(field, *p);
            }
            g_string_append_c(field, '\x1f');
            for (const char *p = number; *p; p++) if (*p != '\x1f') g_string_append_c(field, *p);
            put_field(line, field->str);
            g_string_free(field, TRUE);
        }
        g_free(number);
    }
    g_list_free_full(tels, (GDestroyNotify)e_vcard_attribute_free);
    emit(line);
}

static void objects_added_or_modified(EBookClientView *view, const GSList *contacts, gpointer data) {
    Book *book = data;
    for (const GSList *c = contacts; c; c = c->next) emit_contact(book->uid, c->data);
    flush();
}

static void objects_removed(EBookClientView *view, const GSList *uids, gpointer data) {
    Book *book = data;
    for (const GSList *u = uids; u; u = u->next) {
        GString *line = start_line("remove", book->uid);
        put_field(line, u->data);
        emit(line);
    }
    flush();
}

static void view_complete(EBookClientView *view, const GError *error, gpointer data) {
    Book *book = data;
    GString *line = start_line(error ? "error" : "ready", book->uid);
    if (error) put_field(line, error->message);
    emit(line);
    flush();
}

static void report_error(const char *source, const char *what, const GError *error) {
    GString *line = start_line("error", source);
    char *text = g_strdup_printf("%s: %s", what, error ? error->message : "unknown error");
    put_field(line, text);
    g_free(text);
    emit(line);
    flush();
}

static void open_book(ESource *source);

static void close_book(const char *uid, gboolean tell) {
    Book *book = g_hash_table_lookup(books, uid);
    if (!book) return;
    if (tell) {
        emit(start_line("drop", uid));
        flush();
    }
    g_hash_table_remove(books, uid); /* free_book */
}

static void free_book(gpointer data) {
    Book *book = data;
    g_cancellable_cancel(book->cancellable);
    if (book->view) {
        g_signal_handlers_disconnect_by_data(book->view, book);
        GError *error = NULL;
        e_book_client_view_stop(book->view, &error);
        g_clear_error(&error);
        g_object_unref(book->view);
    }
    if (book->client) {
        g_signal_handlers_disconnect_by_data(book->client, book);
        g_object_unref(book->client);
    }
    g_object_unref(book->cancellable);
    g_free(book->uid);
    g_free(book);
}

/* The address-book factory died (crash, or it was stopped while the registry stayed):
   what this book sent is forgotten and the book opened again, which activates a new factory. */
static void backend_died(EClient *client, gpointer data) {
    Book *book = data;
    char *uid = g_strdup(book->uid);
    close_book(uid, TRUE);
    ESource *source = registry ? e_source_registry_ref_source(registry, uid) : NULL;
    if (source) {
        open_book(source);
        g_object_unref(source);
    }
    g_free(uid);
}

static void view_ready(GObject *object, GAsyncResult *result, gpointer data) {
    char *uid = data; /* the book may have been closed meanwhile: look it up again */
    EBookClientView *view = NULL;
    GError *error = NULL;
    gboolean ok = e_book_client_get_view_finish(E_BOOK_CLIENT(object), result, &view, &error);
    Book *book = g_hash_table_lookup(books, uid);
    if (!ok || !book || book->client != E_BOOK_CLIENT(object)) {
        if (!ok && !g_error_matches(error, G_IO_ERROR, G_IO_ERROR_CANCELLED) && book) report_error(uid, "view", error);
        g_clear_error(&error);
        if (view) g_object_unref(view);
        g_free(uid);
        return;
    }
    book->view = view;
    GSList *fields = NULL;
    fields = g_slist_append(fields, (gpointer)e_contact_field_name(E_CONTACT_FULL_NAME));
    fields = g_slist_append(fields, (gpointer)e_contact_field_name(E_CONTACT_ORG));
    fields = g_slist_append(fields, (gpointer)e_contact_field_name(E_CONTACT_TEL));
    e_book_client_view_set_fields_of_interest(view, fields, NULL);
    g_slist_free(fields);
    g_signal_connect(view, "objects-added", G_CALLBACK(objects_added_or_modified), book);
    g_signal_connect(view, "objects-modified", G_CALLBACK(objects_added_or_modified), book);
    g_signal_connect(view, "objects-removed", G_CALLBACK(objects_removed), book);
    g_signal_connect(view, "complete", G_CALLBACK(view_complete), book);
    e_book_client_view_start(view, &error);
    if (error) {
        report_error(uid, "view", error);
        g_clear_error(&error);
    }
    g_free(uid);
}

static void client_ready(GObject *object, GAsyncResult *result, gpointer data) {
    char *uid = data;
    GError *error = NULL;
    EClient *client = e_book_client_connect_finish(result, &error);
    Book *book = g_hash_table_lookup(books, uid);
    if (!client || !book || book->client) {
        if (!client && book && !g_error_matches(error, G_IO_ERROR, G_IO_ERROR_CANCELLED)) report_error(uid, "open", error);
        g_clear_error(&error);
        if (client) g_object_unref(client);
        g_free(uid);
        return;
    }
    book->client = E_BOOK_CLIENT(client);
    g_signal_connect(client, "backend-died", G_CALLBACK(backend_died), book);
    EBookQuery *query = e_book_query_field_exists(E_CONTACT_TEL);
    char *sexp = e_book_query_to_string(query);
    e_book_query_unref(query);
    e_book_client_get_view(book->client, sexp, book->cancellable, view_ready, uid);
    g_free(sexp);
}

static gboolean is_enabled_book(ESource *source) {
    return e_source_has_extension(source, E_SOURCE_EXTENSION_ADDRESS_BOOK) &&
           registry && e_source_registry_check_enabled(registry, source);
}

static void open_book(ESource *source) {
    const char *uid = e_source_get_uid(source);
    if (!is_enabled_book(source) || g_hash_table_contains(books, uid)) return;
    Book *book = g_new0(Book, 1);
    book->uid = g_strdup(uid);
    book->cancellable = g_cancellable_new();
    g_hash_table_insert(books, book->uid, book);
    /* (guint32)-1: no wait for the backend to be "connected". A local book never says
       it is, and any other wait here would be a full timeout (30 s if one were given). */
    e_book_client_connect(source, (guint32)-1, book->cancellable, client_ready, g_strdup(uid));
}

/* ---- the registry ---- */

static void source_added_or_enabled(ESourceRegistry *r, ESource *source, gpointer data) { open_book(source); }

static void source_removed_or_disabled(ESourceRegistry *r, ESource *source, gpointer data) {
    close_book(e_source_get_uid(source), TRUE);
}

static void source_changed(ESourceRegistry *r, ESource *source, gpointer data) {
    const char *uid = e_source_get_uid(source);
    if (!e_source_has_extension(source, E_SOURCE_EXTENSION_ADDRESS_BOOK)) return;
    if (is_enabled_book(source)) open_book(source);
    else close_book(uid, TRUE);
}

static void registry_ready(GObject *object, GAsyncResult *result, gpointer data) {
    GError *error = NULL;
    ESourceRegistry *made = e_source_registry_new_finish(result, &error);
    if (!made) {
        if (!g_error_matches(error, G_IO_ERROR, G_IO_ERROR_CANCELLED)) report_error("", "registry", error);
        g_clear_error(&error);
        return;
    }
    registry = made;
    g_signal_connect(registry, "source-added", G_CALLBACK(source_added_or_enabled), NULL);
    g_signal_connect(registry, "source-enabled", G_CALLBACK(source_added_or_enabled), NULL);
    g_signal_connect(registry, "source-removed", G_CALLBACK(source_removed_or_disabled), NULL);
    g_signal_connect(registry, "source-disabled", G_CALLBACK(source_removed_or_disabled), NULL);
    g_signal_connect(registry, "source-changed", G_CALLBACK(source_changed), NULL);
    GList *sources = e_source_registry_list_enabled(registry, E_SOURCE_EXTENSION_ADDRESS_BOOK);
    for (GList *s = sources; s; s = s->next) open_book(s->data);
    g_list_free_full(sources, g_object_unref);
}

static void drop_everything(void) {
    GList *uids = g_hash_table_get_keys(books);
    GList *copies = NULL;
    for (GList *u = uids; u; u = u->next) copies = g_list_prepend(copies, g_strdup(u->data));
    g_list_free(uids);
    for (GList *u = copies; u; u = u->next) close_book(u->data, TRUE);
    g_list_free_full(copies, g_free);
    if (registry_cancellable) {
        g_cancellable_cancel(registry_cancellable);
        g_clear_object(&registry_cancellable);
    }
    if (registry) {
        g_signal_handlers_disconnect_matched(registry, G_SIGNAL_MATCH_DATA, 0, 0, NULL, NULL, NULL);
        g_clear_object(&registry);
    }
}

static void sources_appeared(GDBusConnection *bus, const char *name, const char *owner, gpointer data) {
    drop_everything(); /* a new owner without a vanish in between */
    GString *line = start_line("eds", NULL);
    put_field(line, "up");
    emit(line);
    flush();
    registry_cancellable = g_cancellable_new();
    e_source_registry_new(registry_cancellable, registry_ready, NULL);
}

static void sources_vanished(GDBusConnection *bus, const char *name, gpointer data) {
    if (!bus) {
        /* No session bus at all: nothing to read, ever. */
        report_error("", "session bus", NULL);
        g_main_loop_quit(loop);
        return;
    }
    drop_everything();
    GString *line = start_line("eds", NULL);
    put_field(line, "down");
    emit(line);
    flush();
}

/* stdin carries nothing; its end means the daemon is gone. */
static gboolean stdin_ready(gint fd, GIOCondition condition, gpointer data) {
    char buffer[256];
    ssize_t count = read(fd, buffer, sizeof buffer);
    if (count > 0) return G_SOURCE_CONTINUE;
    g_main_loop_quit(loop);
    return G_SOURCE_REMOVE;
}

int main(void) {
    /* No PR_SET_PDEATHSIG: its "parent" is the thread that spawned us, a libdispatch worker of the
     * daemon that exits when idle, which killed the helper seconds after every start (and the
     * daemon started it again, on a timer). stdin's end is the daemon's death: its pipe closes. */
    if (getppid() == 1) return 0;
    signal(SIGPIPE, SIG_IGN);
    static char out[65536];
    setvbuf(stdout, out, _IOFBF, sizeof out);

    loop = g_main_loop_new(NULL, FALSE);
    books = g_hash_table_new_full(g_str_hash, g_str_equal, NULL, free_book);
    g_unix_fd_add(0, G_IO_IN | G_IO_HUP | G_IO_ERR, stdin_ready, NULL);
    /* No auto-start: the address book is read when EDS runs, never started for us. */
    guint watch = g_bus_watch_name(G_BUS_TYPE_SESSION, sources_name, G_BUS_NAME_WATCHER_FLAGS_NONE,
                                   sources_appeared, sources_vanished, NULL, NULL);
    g_main_loop_run(loop);
    g_bus_unwatch_name(watch);
    drop_everything();
    g_hash_table_unref(books);
    return 0;
}
