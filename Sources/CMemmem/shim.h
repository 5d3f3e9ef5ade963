// glibc's memmem, which its headers declare only under _GNU_SOURCE (Swift's Glibc module is not
// built with it): declared here as glibc defines it. A two-way search, vectorised for short needles.
#include <stddef.h>

extern void *memmem(const void *haystack, size_t haystack_length, const void *needle, size_t needle_length);
