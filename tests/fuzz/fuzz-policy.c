/* libFuzzer target for the policy loader (doc/FUZZING.md).
 *
 * Each input is a policy file: written to a memfd and loaded by path,
 * layered on nothing, then checked with rules_check_file() (every error)
 * and, when it loads, explained.  Inputs whose "extends" names a file are
 * skipped so that the fuzzer never reads files of the host; shipped
 * names are fine.  Vars are fixed and point at a resolv.conf in a memfd. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <jansson.h>

#include "rules/load.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char resolv_path[64];

static int memfd_with(const void *data, size_t size)
{
	int fd = memfd_create("fuzz", MFD_CLOEXEC);

	if (fd < 0)
		abort();
	if (size && write(fd, data, size) != (ssize_t)size)
		abort();
	return fd;
}

static int names_a_file(const uint8_t *data, size_t size)
{
	json_t *root = json_loadb((const char *)data, size, 0, NULL);
	const char *ext;
	int file = 0;

	if (!root)
		return 0;
	ext = json_string_value(json_object_get(root, "extends"));
	if (ext) {
		size_t n = strlen(ext);

		file = strchr(ext, '/') || (n >= 5 && !strcmp(ext + n - 5, ".json"));
	}
	json_decref(root);
	return file;
}

static void ignore(const struct rules_error *e, void *arg)
{
	char line[2048];

	(void)arg;
	rules_error_format(e, line, sizeof(line));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rules_vars vars = {
		.root = "/home/u/proj",
		.home = "/home/u",
		.tmpdir = "/tmp/t",
		.cwd = "/home/u/proj",
		.env_path[RULES_ENV_SSH_AUTH_SOCK] = "/run/user/1000/ssh-agent.sock",
		.resolv_conf = resolv_path,
	};
	struct rules_policy *p = NULL;
	struct rules_error err;
	char path[64];
	const char *names[1] = { path };
	int fd;

	if (!resolv_path[0]) {
		static const char conf[] = "nameserver 192.0.2.53\nnameserver 2001:db8::53\n";
		int rfd = memfd_with(conf, sizeof(conf) - 1);

		snprintf(resolv_path, sizeof(resolv_path), "/proc/self/fd/%d", rfd);
	}
	if (size > 256 * 1024 || names_a_file(data, size))
		return 0;
	fd = memfd_with(data, size);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	rules_check_file(path, &vars, ignore, NULL);
	if (rules_load(names, 1, NULL, 0, &vars, &p, &err) == 0) {
		char *text = rules_explain(p);

		if (!text || rules_policy_check(p, p->size) != 0)
			abort();
		free(text);
		free(p);
	} else {
		char line[2048];

		rules_error_format(&err, line, sizeof(line));
	}
	close(fd);
	return 0;
}
