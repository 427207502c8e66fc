/* The next definition of each wrapped libc function (dlsym(RTLD_NEXT)),
 * resolved once in the constructor: a wrapper running in a vfork child or
 * between fork and exec must never call dlsym (it takes the loader's lock
 * and may allocate). */
#ifndef AGENTTRACE_PRELOAD_REAL_H
#define AGENTTRACE_PRELOAD_REAL_H

/* Every wrapped symbol; exports.txt lists the same names. */
#define REAL_LIST(X)                                                                 \
	X(open) X(open64) X(openat) X(openat64) X(__open_2) X(__open64_2)             \
	X(__openat_2) X(__openat64_2) X(creat) X(creat64) X(fopen) X(fopen64)         \
	X(freopen) X(freopen64) X(rename) X(renameat) X(renameat2) X(link) X(linkat)  \
	X(symlink) X(symlinkat) X(unlink) X(unlinkat) X(mkdir) X(mkdirat)             \
	X(truncate) X(truncate64)                                                     \
	X(execve) X(execv) X(execvp) X(execvpe) X(execl) X(execlp) X(execle)          \
	X(fexecve) X(execveat) X(posix_spawn) X(posix_spawnp)                         \
	X(posix_spawn_file_actions_addopen)                                           \
	X(connect) X(sendto) X(sendmsg) X(sendmmsg) X(bind) X(listen) X(getaddrinfo) \
	X(gethostbyname)                                                              \
	X(gethostbyname2) X(gethostbyname_r) X(gethostbyname2_r)

#define REAL_ENUM(name) REAL_##name,
enum real_id { REAL_LIST(REAL_ENUM) REAL_COUNT };
#undef REAL_ENUM

/* Resolve every entry (the constructor; idempotent). */
void real_init(void);

/* The next definition of ID; NULL when libc has none. */
void *real_get(enum real_id id);

/* REAL(open, int (*)(const char *, int, ...)) */
#define REAL(name, type) ((type)real_get(REAL_##name))

#endif
