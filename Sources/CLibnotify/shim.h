#include <libnotify/notify.h>
// GSettings (the desktop's Do Not Disturb); GIO is linked with libnotify.
#include <gio/gio.h>
