/* CI's own channels: the files through which a GitHub Actions step hands
 * environment variables ($GITHUB_ENV) and PATH entries ($GITHUB_PATH) to
 * every later step of the job.  The policy lets the command write them
 * (write.ci-channel.*); what it wrote is judged when the session ends,
 * before the runner reads them: an entry that would load code into later
 * steps (LD_PRELOAD, NODE_OPTIONS, BASH_ENV, ...) or a PATH entry outside
 * the workspace is taken out again, with a record; so is the file itself
 * when the command put a symlink, a FIFO or a directory in its place.
 * $GITHUB_OUTPUT and $GITHUB_STATE pass: later steps read them only where
 * a workflow names them.
 *
 * GitLab CI's counterpart is a job's dotenv report (artifacts: reports:
 * dotenv: FILE), whose NAME=VALUE lines become variables of the later
 * jobs: under GITLAB_CI the files AGENTTRACE_GITLAB_DOTENV names, else
 * those the project's .gitlab-ci.yml names, are judged the same way. */
#ifndef AGENTTRACE_CICHANNEL_H
#define AGENTTRACE_CICHANNEL_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct session;

enum cichannel_kind { CICHANNEL_ENV, CICHANNEL_PATH, CICHANNEL_DOTENV };

/* $GITHUB_ENV, $GITHUB_PATH and up to this many dotenv reports. */
#define CICHANNEL_DOTENV_FILES 4

struct cichannel {
	enum cichannel_kind kind;
	char *path;       /* NULL: the variable is unset or names no regular file */
	char *shown;      /* how records name it: "$GITHUB_ENV", "the dotenv report F" */
	bool existed;     /* a regular file at the start (a dotenv report may be made later) */
	char *before;     /* its content at the start */
	size_t before_len;
	mode_t mode;      /* its permissions and owner at the start, for the */
	uid_t uid;        /* file put in its place */
	gid_t gid;
};

struct cichannels {
	struct cichannel v[2 + CICHANNEL_DOTENV_FILES];
	size_t n;
};

/* Before the command runs: what the channel files hold.  ROOT is the
 * workspace (where a dotenv report's relative name is). */
void cichannel_start(struct cichannels *c, const char *root);

/* After every process of the session is gone: judge what was added and
 * take out what is refused, each with a record.  ROOT is the workspace. */
void cichannel_finish(struct session *s, struct cichannels *c, const char *root);

void cichannel_free(struct cichannels *c);

#endif
