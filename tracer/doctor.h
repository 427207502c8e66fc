/* agenttrace --doctor (agenttrace(1), DOCTOR): what this machine's kernel
 * offers the supervisor, and what a session here will use or do
 * without. */
#ifndef AGENTTRACE_DOCTOR_H
#define AGENTTRACE_DOCTOR_H

/* Prints the report on standard output.  Returns the exit status: 0, or
 * 125 when standard output cannot be written. */
int doctor_run(void);

#endif
