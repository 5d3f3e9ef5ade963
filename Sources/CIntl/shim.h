// glibc's gettext (libintl.h), which Swift's Glibc module does not include; part of libc, so
// nothing to link.
#include <libintl.h>
#include <locale.h>
