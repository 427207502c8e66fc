/* Inside the decoder: what decode.c shares with the decoders of one class
 * kept in files of their own (decode-signal.c). */
#ifndef AGENTTRACE_DECODE_H
#define AGENTTRACE_DECODE_H

#include <sys/types.h>

#include "tracer/syscall/call.h"
#include "tracer/syscall/table.h"

/* Mark C as a call that steps around the supervisor: denied with ERR. */
void decode_set_bypass(struct call *c, const struct syscall_bypass *b, int err);

/* Class SYSCALL_SIGNAL (kill, tkill, tgkill, rt_sigqueueinfo,
 * rt_tgsigqueueinfo, pidfd_send_signal, pidfd_open, pidfd_getfd): a
 * bypass when the call reaches a process outside the session, a
 * signal_scope when only the supervisor can tell.  0 or -errno. */
int decode_signal(pid_t pid, const struct call_ctx *ctx, const struct syscall_entry *e,
		  struct call *c);

/* fcntl F_SETOWN, F_SETOWN_EX; ioctl FIOSETOWN, SIOCSPGRP (the call's
 * bypass test held): 1 when the owner named is a process or a process
 * group with a member outside the session (C's why says which), 0 when
 * the call may run, or -errno. */
int decode_owner_outside(pid_t pid, const struct call_ctx *ctx, struct call *c);

#endif
