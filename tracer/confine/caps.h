/* Root without root's powers: the capabilities a command run as root
 * keeps (agenttrace(1) --keep-caps, doc/THREAT-MODEL.md "Root").
 *
 * The default is what a default container runtime grants, less
 * CAP_MKNOD and CAP_NET_RAW (device nodes and raw sockets are refused by
 * the filter anyway): enough for package installs and builds as root
 * (chown, chmod, setuid helpers, binding low ports), not for the kernel,
 * the machine's devices, clock, network set-up or other processes'
 * memory. */
#ifndef AGENTTRACE_CAPS_H
#define AGENTTRACE_CAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One bit per capability number (CAP_CHOWN is bit 0). */
typedef uint64_t caps_set;

#define CAPS_ALL (~(caps_set)0)

/* The set a root command keeps without --keep-caps. */
caps_set caps_default_keep(void);

/* A --keep-caps value: "all", or capability names separated by commas
 * ("sys_ptrace,net_admin", "CAP_SYS_PTRACE"; case does not matter), added
 * to the default.  Returns 0, or -EINVAL with the offending name in BAD
 * (BAD_SIZE bytes). */
int caps_parse(const char *list, caps_set *out, char *bad, size_t bad_size);

/* The names of SET, lower case, comma-separated ("chown,dac_override");
 * "all" for every capability. */
void caps_text(caps_set set, char *buf, size_t size);

/* In the child, just before exec: every capability outside KEEP leaves
 * the bounding set (so that the exec as root cannot give it back), the
 * permitted, effective and inheritable sets, and the ambient set is
 * cleared.  Needs CAP_SETPCAP in force, so before --user or any other
 * drop of the effective set.  0 or -errno. */
int caps_drop_child(caps_set keep);

#endif
