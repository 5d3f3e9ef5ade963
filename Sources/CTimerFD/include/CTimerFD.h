// Linux's timerfd (a timer read as a file descriptor), which Swift's Glibc module leaves out.
#include <sys/timerfd.h>
