/* agenttrace: options -> session -> spawn -> loop -> exit status. */
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/exitcode.h"
#include "lib/log.h"
#include "tracer/signals.h"
#include "tracer/confine/limits.h"
#include "tracer/doctor.h"
#include "tracer/ptrace/loop.h"
#include "tracer/options.h"
#include "tracer/record/record.h"
#include "tracer/session.h"
#include "tracer/start.h"
#include "tracer/shim/preload-mode.h"
#include "tracer/spawn.h"

int main(int argc, char **argv)
{
	struct options opt;
	struct session s;
	pid_t *left = NULL;
	size_t n_left = 0;
	int ret, code, sig = 0;

	log_set_program("agenttrace");
	ret = options_parse(argc, argv, &opt);
	if (ret != AT_GO_ON)
		goto out_options;
	log_set_level(opt.verbosity);
	if (opt.doctor) {
		ret = doctor_run();
		goto out_options;
	}

	ret = session_start(&s, &opt);
	if (ret != AT_GO_ON)
		goto out_session;

	s.channel_handler = preload_mode_event;
	signals_setup();
	ret = spawn_command(&s);
	if (ret != AT_GO_ON) {
		if (s.command_refused)
			session_summary(&s, ret, 0, NULL, 0);
		goto out_session;
	}
	/* The backend: spawn_command() may have fallen back to preload. */
	if (s.preload_only)
		preload_mode_run(&s, &left, &n_left);
	else
		loop_run(&s, &left, &n_left);
	limits_finish(&s);

	ret = spawn_outcome(&s);
	if (WIFSIGNALED(s.main_status))
		sig = WTERMSIG(s.main_status);
	code = ret != AT_GO_ON ? ret : WIFEXITED(s.main_status) ? WEXITSTATUS(s.main_status) :
	       sig ? AT_EXIT_SIGNAL_BASE + sig : AT_EXIT_FAILURE;
	session_summary(&s, code, sig, left, n_left);
	if (ret == AT_GO_ON)
		ret = session_exit_status(&s);
	else if (s.lost)
		ret = AT_EXIT_FAILURE;
	free(left);
out_session:
	limits_finish(&s);
	session_end(&s);
out_options:
	options_free(&opt);
	return ret;
}
