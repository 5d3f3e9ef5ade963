#include <sqlite3.h>

// SQLITE_TRANSIENT is a cast of -1 to a function pointer, which Swift does not import:
// the bound text or blob is copied by SQLite before the call returns.
static inline sqlite3_destructor_type monkeycall_sqlite_transient(void) { return SQLITE_TRANSIENT; }
