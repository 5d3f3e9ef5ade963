// GTK 4 and libadwaita 1.2 for Swift, and the few macros and variadic functions Swift cannot
// import, as inline functions (compiled by clang where Swift calls them).
#include <adwaita.h>
#include <glib-unix.h>

/// g_signal_connect is a macro.
static inline gulong mc_signal_connect(gpointer instance, const char *signal, GCallback handler, gpointer data,
                                       GClosureNotify destroy) {
    return g_signal_connect_data(instance, signal, handler, data, destroy, (GConnectFlags)0);
}

/// gtk_accessible_update_property is variadic: the label a screen reader (and AT-SPI) reads.
static inline void mc_accessible_set_label(gpointer accessible, const char *label) {
    gtk_accessible_update_property(GTK_ACCESSIBLE(accessible), GTK_ACCESSIBLE_PROPERTY_LABEL, label, -1);
}

static inline void mc_accessible_set_description(gpointer accessible, const char *text) {
    gtk_accessible_update_property(GTK_ACCESSIBLE(accessible), GTK_ACCESSIBLE_PROPERTY_DESCRIPTION, text, -1);
}

/// G_TYPE_STRING and friends are macros.
static inline GVariantType *mc_variant_type_string(void) { return (GVariantType *)G_VARIANT_TYPE_STRING; }

/// A GAction's parameter (GVariant "s"): the string, NULL when it is none.
static inline const char *mc_variant_string(GVariant *value) {
    if (value == NULL || !g_variant_is_of_type(value, G_VARIANT_TYPE_STRING)) return NULL;
    return g_variant_get_string(value, NULL);
}

static inline GType mc_type_string_object(void) { return GTK_TYPE_STRING_OBJECT; }
