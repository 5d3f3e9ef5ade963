/* RSS of a process that reads every enabled address book through libebook, against the same
   process without libebook (built with -DWITH_EBOOK or not). scripts/addressbook-footprint runs it. */
#include <gio/gio.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#ifdef WITH_EBOOK
#define GLIB_DISABLE_DEPRECATION_WARNINGS
#include <libebook/libebook.h>
#endif

static void print_rss(const char *label) {
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long rss = 0, anon = 0, file = 0;
    while (fgets(line, sizeof line, f)) {
        sscanf(line, "VmRSS: %ld", &rss);
        sscanf(line, "RssAnon: %ld", &anon);
        sscanf(line, "RssFile: %ld", &file);
    }
    fclose(f);
    printf("%-28s VmRSS %6.1f MiB (anon %5.1f, file %5.1f)\n", label, rss / 1024.0, anon / 1024.0, file / 1024.0);
    fflush(stdout);
}

static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec / 1e9; }

#ifdef WITH_EBOOK
static int pending = 0, numbers = 0, contacts = 0;
static GMainLoop *loop;
static void added(EBookClientView *view, const GSList *list, gpointer data) {
    for (const GSList *l = list; l; l = l->next) {
        EContact *c = l->data;
        contacts++;
        GList *tels = e_contact_get(c, E_CONTACT_TEL);
        numbers += g_list_length(tels);
        g_list_free_full(tels, g_free);
    }
}
static void complete(EBookClientView *view, const GError *error, gpointer data) {
    if (--pending == 0) g_main_loop_quit(loop);
}
#endif

int main(int argc, char **argv) {
    double start = now();
    print_rss("start");
    GDBusConnection *bus = g_bus_get_sync(G_BUS_TYPE_SESSION, NULL, NULL);
    (void)bus;
    print_rss("session bus");
#ifdef WITH_EBOOK
    if (argc > 1 && strcmp(argv[1], "linked-only") == 0) { print_rss("linked, not used"); return 0; }
    loop = g_main_loop_new(NULL, FALSE);
    GError *error = NULL;
    ESourceRegistry *registry = e_source_registry_new_sync(NULL, &error);
    if (!registry) { fprintf(stderr, "registry: %s\n", error->message); return 1; }
    printf("registry after %.2f s\n", now() - start);
    print_rss("registry");
    GList *sources = e_source_registry_list_enabled(registry, E_SOURCE_EXTENSION_ADDRESS_BOOK);
    EBookQuery *query = e_book_query_field_exists(E_CONTACT_TEL);
    char *sexp = e_book_query_to_string(query);
    for (GList *s = sources; s; s = s->next) {
        EClient *client = e_book_client_connect_sync(s->data, (guint32)-1, NULL, &error);
        if (!client) { fprintf(stderr, "connect: %s\n", error->message); g_clear_error(&error); continue; }
        EBookClientView *view = NULL;
        if (!e_book_client_get_view_sync(E_BOOK_CLIENT(client), sexp, &view, NULL, &error)) { fprintf(stderr, "view: %s\n", error->message); g_clear_error(&error); continue; }
        GSList *fields = NULL;
        fields = g_slist_append(fields, (gpointer)e_contact_field_name(E_CONTACT_FULL_NAME));
        fields = g_slist_append(fields, (gpointer)e_contact_field_name(E_CONTACT_TEL));
        e_book_client_view_set_fields_of_interest(view, fields, NULL);
        g_signal_connect(view, "objects-added", G_CALLBACK(added), NULL);
        g_signal_connect(view, "complete", G_CALLBACK(complete), NULL);
        pending++;
        e_book_client_view_start(view, &error);
    }
    print_rss("clients connected");
    if (pending) g_main_loop_run(loop);
    printf("%d sources, %d contacts, %d numbers read after %.2f s\n", g_list_length(sources), contacts, numbers, now() - start);
    print_rss("views complete");
    /* Idle a moment, as the daemon would, then again. */
    GMainContext *ctx = g_main_context_default();
    double until = now() + 2;
    while (now() < until) g_main_context_iteration(ctx, FALSE), g_usleep(10000);
    print_rss("idle 2 s later");
#endif
    return 0;
}
