// glibc's gettext (libintl.h), which Swift's Glibc module does not include; part of libc, so
// nothing to link. And wcwidth, which glibc declares only under _XOPEN_SOURCE.
#include <libintl.h>
#include <locale.h>
#include <wchar.h>

extern int wcwidth(wchar_t c);
