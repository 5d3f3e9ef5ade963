// Two glibc functions its headers declare only under _GNU_SOURCE, which Swift's Glibc module is not
// built with (and defining it here would make this module's structs differ from Glibc's): declared
// here as glibc (2.34 on) defines them.
#include <spawn.h>

extern int posix_spawn_file_actions_addclosefrom_np(posix_spawn_file_actions_t *actions, int from);
extern int pipe2(int ends[2], int flags);

/// Closes every descriptor from `lowest` up in the child, after the actions added before it.
static inline int monkeycall_spawn_close_from(posix_spawn_file_actions_t *actions, int lowest) {
    return posix_spawn_file_actions_addclosefrom_np(actions, lowest);
}

/// A pipe whose ends are close-on-exec from their creation (no moment in which a child
/// another thread starts could inherit them). `flags`: O_CLOEXEC.
static inline int monkeycall_pipe(int ends[2], int flags) {
    return pipe2(ends, flags);
}
