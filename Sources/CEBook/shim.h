// libebook (evolution-data-server's client library), for the monkeycall-contacts helper only:
// the daemon never loads it (see Sources/AddressBook/EDSSource.swift for why).
#define GLIB_DISABLE_DEPRECATION_WARNINGS
#include <libebook/libebook.h>
