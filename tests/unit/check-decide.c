/* Unit tests of rules_decide(), rules_effective(), rules_env_dropped(),
 * the name helpers and rules_policy_check(), on blocks built by
 * blockbuild.c. */
#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "rules/rules.h"
#include "tests/unit/blockbuild.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

#define W RULES_KIND_WRITE
#define R RULES_KIND_READ
#define X RULES_KIND_EXEC
#define NET RULES_KIND_NET
#define ALLOW RULES_ACTION_ALLOW
#define ALERT RULES_ACTION_ALERT
#define DENY RULES_ACTION_DENY

static const struct bb_rule test_rules[] = {
	{ W, ALLOW, "/r/**", "write.root", { NULL } },
	{ W, ALLOW, "/tmp/**", "write.tmp", { NULL } },
	{ W, DENY, "/r/**/.git/hooks/**", "write.git-hooks", { NULL } },
	{ W, ALERT, "/r/.git/hooks/**", "write.hooks-alert", { NULL } },
	{ W, ALERT, "/r/alerted/**", "write.alerted", { NULL } },
	{ W, DENY, "/r/**/.envrc", "write.envrc", { "/r/ok/.envrc", "/r/ok2/**" } },
	{ R, DENY, "/h/.ssh/id_*", "read.ssh-key", { "/h/.ssh/*.pub" } },
	{ R, ALERT, "/h/.config/**", "read.config", { NULL } },
	{ NET, ALLOW, "127.0.0.0/8", "net.loopback", { NULL } },
	{ NET, ALLOW, "::1", "net.loopback6", { NULL } },
	{ NET, DENY, "169.254.169.254", "net.metadata", { NULL } },
	{ NET, ALLOW, "*:443", "net.https", { NULL } },
	{ NET, ALERT, "*.pythonhosted.org:443", "net.pyhosted", { NULL } },
	{ NET, ALLOW, "unix:*", "net.unix", { NULL } },
	{ NET, DENY, "unix:/run/docker.sock", "net.docker", { NULL } },
	{ X, DENY, "/tmp/** **", "exec.tmp", { "/tmp/ok/** **" } },
	{ X, ALERT, "pip|pip3 install **", "exec.pip-install", { NULL } },
	{ X, DENY, "sudo|su|doas **", "exec.sudo", { NULL } },
	{ X, ALERT, "sudo **", "exec.sudo-alert", { NULL } },
};

static const char *const env_drop_globs[] = { "*_TOKEN", "*_SECRET*", "AWS_*" };

static struct rules_policy *test_policy(enum rules_mode mode, size_t *size)
{
	struct bb_policy def = {
		.name = "decide-test",
		.mode = mode,
		.rules = test_rules,
		.n_rules = N(test_rules),
		.env_drop = env_drop_globs,
		.n_env_drop = N(env_drop_globs),
	};
	return bb_build(&def, size);
}

struct decide_case {
	enum rules_kind kind;
	const char *path;      /* write/read path, exec exe, unix socket path */
	const char *argv[4];
	int family;
	const char *addr;
	uint16_t port;
	const char *host;
	enum rules_action expect;
	const char *id;
};

static const struct decide_case decide_cases[] = {
	{ W, "/r/src/a.c", { 0 }, 0, 0, 0, 0, ALLOW, "write.root" },
	{ W, "/r", { 0 }, 0, 0, 0, 0, ALLOW, "write.root" },
	{ W, "/rx", { 0 }, 0, 0, 0, 0, DENY, "write.fallback" },
	{ W, "/r/.git/hooks/pre-commit", { 0 }, 0, 0, 0, 0, DENY, "write.git-hooks" },
	{ W, "/r/sub/.git/hooks", { 0 }, 0, 0, 0, 0, DENY, "write.git-hooks" },
	{ W, "/r/./sub//.git/hooks/x", { 0 }, 0, 0, 0, 0, DENY, "write.git-hooks" },
	{ W, "/r/alerted/x", { 0 }, 0, 0, 0, 0, ALERT, "write.alerted" },
	{ W, "/r/.envrc", { 0 }, 0, 0, 0, 0, DENY, "write.envrc" },
	{ W, "/r/ok/.envrc", { 0 }, 0, 0, 0, 0, ALLOW, "write.root" },  /* unless */
	{ W, "/r/ok2/a/.envrc", { 0 }, 0, 0, 0, 0, ALLOW, "write.root" }, /* second unless */
	{ W, "/r/ok3/.envrc", { 0 }, 0, 0, 0, 0, DENY, "write.envrc" },
	{ W, "/tmp/x", { 0 }, 0, 0, 0, 0, ALLOW, "write.tmp" },
	{ W, "/etc/passwd", { 0 }, 0, 0, 0, 0, DENY, "write.fallback" },
	{ W, "/r/../etc/passwd", { 0 }, 0, 0, 0, 0, DENY, "write.fallback" },
	{ W, NULL, { 0 }, 0, 0, 0, 0, DENY, "write.fallback" },
	{ R, "/h/.ssh/id_rsa", { 0 }, 0, 0, 0, 0, DENY, "read.ssh-key" },
	{ R, "/h/.ssh/id_rsa.pub", { 0 }, 0, 0, 0, 0, ALLOW, "read.fallback" },
	{ R, "/h/.config/x/y", { 0 }, 0, 0, 0, 0, ALERT, "read.config" },
	{ R, "/etc/hosts", { 0 }, 0, 0, 0, 0, ALLOW, "read.fallback" },
	{ R, "/r/.git/hooks/x", { 0 }, 0, 0, 0, 0, ALLOW, "read.fallback" }, /* write rules only */
	{ NET, NULL, { 0 }, AF_INET, "127.0.0.1", 80, 0, ALLOW, "net.loopback" },
	{ NET, NULL, { 0 }, AF_INET6, "::ffff:127.0.0.1", 80, 0, ALLOW, "net.loopback" },
	{ NET, NULL, { 0 }, AF_INET6, "::1", 80, 0, ALLOW, "net.loopback6" },
	{ NET, NULL, { 0 }, AF_INET, "169.254.169.254", 443, 0, DENY, "net.metadata" },
	{ NET, NULL, { 0 }, AF_INET, "1.2.3.4", 443, "files.pythonhosted.org", ALERT, "net.pyhosted" },
	{ NET, NULL, { 0 }, AF_INET, "1.2.3.4", 443, 0, ALLOW, "net.https" },
	{ NET, NULL, { 0 }, AF_INET, "1.2.3.4", 80, 0, DENY, "net.fallback" },
	{ NET, NULL, { 0 }, 0, NULL, 443, "pypi.org", ALLOW, "net.https" },
	{ NET, NULL, { 0 }, 0, NULL, 80, "pypi.org", DENY, "net.fallback" },
	{ NET, "/run/x.sock", { 0 }, AF_UNIX, 0, 0, 0, ALLOW, "net.unix" },
	{ NET, "/run/docker.sock", { 0 }, AF_UNIX, 0, 0, 0, DENY, "net.docker" },
	{ NET, "@abstract", { 0 }, AF_UNIX, 0, 0, 0, DENY, "net.local-outside" },
	{ X, "/tmp/x/evil", { "evil" }, 0, 0, 0, 0, DENY, "exec.tmp" },
	{ X, "/tmp/ok/tool", { "tool", "-v" }, 0, 0, 0, 0, ALLOW, "exec.not-allowed" },
	{ X, "/usr/bin/pip", { "pip", "install", "x" }, 0, 0, 0, 0, ALERT, "exec.pip-install" },
	{ X, "/usr/bin/sudo", { "sudo", "ls" }, 0, 0, 0, 0, DENY, "exec.sudo" },
	/* argv[0]'s name is one more name for deny and alert rules */
	{ X, "/usr/bin/ls", { "sudo", "ls" }, 0, 0, 0, 0, DENY, "exec.sudo" },
	{ X, "/usr/bin/ls", { "/opt/x/pip", "install", "y" }, 0, 0, 0, 0, ALERT, "exec.pip-install" },
	{ X, "/usr/bin/ls", { "ls", "sudo" }, 0, 0, 0, 0, ALLOW, "exec.not-allowed" },
	{ X, NULL, { "sudo" }, 0, 0, 0, 0, ALLOW, "exec.not-allowed" },
};

static void case_event(const struct decide_case *c, struct rules_event *ev)
{
	memset(ev, 0, sizeof(*ev));
	ev->kind = c->kind;
	switch (c->kind) {
	case RULES_KIND_WRITE:
	case RULES_KIND_READ:
		ev->path = c->path;
		break;
	case RULES_KIND_EXEC:
		ev->exe = c->path;
		ev->argv = c->argv;
		while (ev->argc < N(c->argv) && c->argv[ev->argc])
			ev->argc++;
		break;
	case RULES_KIND_NET:
		ev->family = c->family;
		ev->port = c->port;
		ev->host = c->host;
		if (c->family == AF_UNIX)
			ev->unix_path = c->path;
		else if (c->family)
			ck_assert_int_eq(inet_pton(c->family, c->addr, ev->addr), 1);
		break;
	default:
		break;
	}
}

START_TEST(test_decide)
{
	const struct decide_case *c = &decide_cases[_i];
	struct rules_policy *p = test_policy(RULES_MODE_ENFORCE, NULL);
	struct rules_event ev;
	struct rules_verdict v;

	ck_assert_int_eq(rules_policy_check(p, p->size), 0);
	case_event(c, &ev);
	ck_assert_int_eq(rules_decide(p, &ev, &v), 0);
	ck_assert_ptr_nonnull(v.rule);
	ck_assert_msg(v.action == c->expect && strcmp(rules_string(p, v.rule->id), c->id) == 0,
		      "case %d (%s %s): got %s %s, want %s %s", _i, rules_kind_name(c->kind),
		      c->path ? c->path : (c->addr ? c->addr : "-"), rules_action_name(v.action),
		      rules_string(p, v.rule->id), rules_action_name(c->expect), c->id);
	ck_assert_int_eq(v.rule->action, v.action);
	ck_assert_int_eq(v.rule->kind, c->kind);
	free(p);
}
END_TEST

/* The exec fallback becomes a deny when the section has an allow list. */
START_TEST(test_fallback_per_kind)
{
	static const struct bb_rule rules[] = {
		{ X, ALLOW, "gcc|cc1|as|ld **", "exec.toolchain", { NULL } },
		{ R, DENY, "/secret", "read.secret", { NULL } },
	};
	struct bb_policy def = { .rules = rules, .n_rules = N(rules) };
	struct rules_policy *p = bb_build(&def, NULL);
	const char *argv[] = { "x", NULL };
	struct rules_event ev = { .kind = X, .exe = "/bin/ls", .argv = argv, .argc = 1 };
	struct rules_verdict v;

	ck_assert_int_eq(rules_decide(p, &ev, &v), 0);
	ck_assert_int_eq(v.action, DENY);
	ck_assert_str_eq(rules_string(p, v.rule->id), "exec.not-allowed");
	ck_assert_ptr_eq(v.rule, rules_rule_at(p, p->fallback[X]));
	ev.exe = "/usr/lib/gcc/x86_64-linux-gnu/12/cc1";
	ck_assert_int_eq(rules_decide(p, &ev, &v), 0);
	ck_assert_int_eq(v.action, ALLOW);
	ck_assert_str_eq(rules_string(p, v.rule->id), "exec.toolchain");

	memset(&ev, 0, sizeof(ev));
	ev.kind = W;
	ev.path = "/anything";
	ck_assert_int_eq(rules_decide(p, &ev, &v), 0);
	ck_assert_int_eq(v.action, DENY);
	ck_assert_str_eq(rules_string(p, v.rule->id), "write.fallback");
	ev.kind = R;
	ck_assert_int_eq(rules_decide(p, &ev, &v), 0);
	ck_assert_int_eq(v.action, ALLOW);
	ck_assert_str_eq(rules_string(p, v.rule->id), "read.fallback");
	ev.kind = NET;
	ev.family = AF_INET;
	ev.addr[0] = 192;
	ck_assert_int_eq(rules_decide(p, &ev, &v), 0);
	ck_assert_int_eq(v.action, DENY);
	ck_assert_str_eq(rules_string(p, v.rule->id), "net.fallback");
	/* 0.0.0.0 as a destination is this host: the local fallback */
	ev.addr[0] = 0;
	ck_assert_int_eq(rules_decide(p, &ev, &v), 0);
	ck_assert_int_eq(v.action, DENY);
	ck_assert_str_eq(rules_string(p, v.rule->id), "net.local-outside");
	ev.bind = true;
	ck_assert_int_eq(rules_decide(p, &ev, &v), 0);
	ck_assert_int_eq(v.action, DENY);
	ck_assert_str_eq(rules_string(p, v.rule->id), "net.inbound");
	ev.addr[0] = 127;
	ck_assert_int_eq(rules_decide(p, &ev, &v), 0);
	ck_assert_int_eq(v.action, ALLOW);
	ck_assert_str_eq(rules_string(p, v.rule->id), "net.bind-loopback");
	free(p);
}
END_TEST

/* Exec identity (rules.h, struct rules_event): which names each rule
 * kind sees. */
static const struct bb_rule id_rules[] = {
	{ X, DENY, "/tmp/** **", "exec.tmp", { "/tmp/proj/** **" } },
	{ X, DENY, "evil.sh **", "exec.evil", { NULL } },
	{ X, ALERT, "npm ** install **", "exec.npm-install", { NULL } },
	{ X, ALLOW, "sh|python3|node|npm **", "exec.allowed", { NULL } },
};

struct id_case {
	const char *exe;
	const char *argv[6];
	const char *exe_name;
	const char *script;
	size_t script_arg;
	const char *script_name;
	enum rules_action expect;
	const char *id;
};

static const struct id_case id_cases[] = {
	/* the script's path, for the temp-dir rule, with its "unless" */
	{ "/bin/sh", { "sh", "/tmp/x.sh" }, 0, "/tmp/x.sh", 1, 0, DENY, "exec.tmp" },
	{ "/bin/sh", { "sh", "x.sh" }, 0, "/tmp/proj/x.sh", 1, 0, ALLOW, "exec.allowed" },
	{ "/tmp/proj/venv/python3", { "python3", "/tmp/y.py" }, 0, "/tmp/y.py", 1, 0, DENY,
	  "exec.tmp" },
	{ "/bin/sh", { "sh", "-e", "./a/../../tmp/x.sh" }, 0, "/r/a/../../tmp/x.sh", 2, 0, DENY,
	  "exec.tmp" },
	/* the script's base name */
	{ "/bin/sh", { "sh", "evil.sh" }, 0, "/r/evil.sh", 1, 0, DENY, "exec.evil" },
	/* the script's package name, with the arguments after the script */
	{ "/usr/bin/node", { "node", "/n/npm/bin/npm-cli.js", "install", "x" }, 0,
	  "/n/npm/bin/npm-cli.js", 1, "npm", ALERT, "exec.npm-install" },
	{ "/usr/bin/node", { "node", "/n/npm/bin/npm-cli.js", "ls" }, 0, "/n/npm/bin/npm-cli.js", 1,
	  "npm", ALLOW, "exec.allowed" },
	/* "install" before the script is the interpreter's, not npm's */
	{ "/usr/bin/node", { "node", "install", "/n/npm/bin/npm-cli.js" }, 0,
	  "/n/npm/bin/npm-cli.js", 2, "npm", ALLOW, "exec.allowed" },
	/* the program's own package name: every rule sees it */
	{ "/n/npm/bin/npm-cli.js", { "/usr/bin/npm", "install" }, "npm", 0, 0, 0, ALERT,
	  "exec.npm-install" },
	{ "/n/npm/bin/npm-cli.js", { "x", "ls" }, "npm", 0, 0, 0, ALLOW, "exec.allowed" },
	/* allow rules see neither argv[0]'s name nor the script */
	{ "/opt/tool", { "sh", "x" }, 0, 0, 0, 0, DENY, "exec.not-allowed" },
	{ "/opt/tool", { "tool", "s.sh" }, 0, "/r/sh", 1, 0, DENY, "exec.not-allowed" },
	{ "/opt/tool", { "tool", "s.js" }, 0, "/r/s.js", 1, "npm", DENY, "exec.not-allowed" },
	/* a script that does not fit is no identity */
	{ "/bin/sh", { "sh", "x" }, 0, "", 1, 0, ALLOW, "exec.allowed" },
};

START_TEST(test_exec_identity)
{
	const struct id_case *c = &id_cases[_i];
	struct bb_policy def = { .rules = id_rules, .n_rules = N(id_rules) };
	struct rules_policy *p = bb_build(&def, NULL);
	struct rules_event ev = { .kind = X, .exe = c->exe, .argv = c->argv,
				  .exe_name = c->exe_name, .script = c->script,
				  .script_arg = c->script_arg, .script_name = c->script_name };
	struct rules_verdict v;

	while (ev.argc < N(c->argv) && c->argv[ev.argc])
		ev.argc++;
	ck_assert_int_eq(rules_decide(p, &ev, &v), 0);
	ck_assert_msg(v.action == c->expect && strcmp(rules_string(p, v.rule->id), c->id) == 0,
		      "case %d (%s %s): got %s %s, want %s %s", _i, c->exe,
		      c->script ? c->script : "-", rules_action_name(v.action),
		      rules_string(p, v.rule->id), rules_action_name(c->expect), c->id);
	free(p);
}
END_TEST

/* rules_decide_exec_alias(): another name of the same program decides
 * only what no rule decided (lib/alternatives.h). */
START_TEST(test_exec_alias)
{
	static const struct bb_rule rules[] = {
		{ X, ALLOW, "vi|which|nc **", "exec.tools", { NULL } },
		{ X, DENY, "nc.openbsd ** -e **", "exec.nc-e", { NULL } },
		{ X, DENY, "pwn **", "exec.pwn", { NULL } },
	};
	struct bb_policy def = { .rules = rules, .n_rules = N(rules) };
	struct rules_policy *p = bb_build(&def, NULL);
	const char *argv[] = { "vi", "--version", NULL };
	const char *nc_argv[] = { "nc", "-e", "/bin/sh", NULL };
	struct rules_event ev = { .kind = X, .exe = "/usr/bin/vim.basic", .argv = argv, .argc = 2 };
	struct rules_call_verdict cv;

	rules_decide_call(p, &ev, 1, NULL, &cv);
	ck_assert_str_eq(rules_string(p, cv.rule->id), "exec.not-allowed");
	rules_decide_exec_alias(p, &ev, NULL, &cv);
	ck_assert_str_eq(rules_string(p, cv.rule->id), "exec.not-allowed");
	rules_decide_exec_alias(p, &ev, "/etc/alternatives/vi", &cv);
	ck_assert_int_eq(cv.action, ALLOW);
	ck_assert_int_eq(cv.effective, ALLOW);
	ck_assert_str_eq(rules_string(p, cv.rule->id), "exec.tools");

	/* An alias no rule names changes nothing. */
	rules_decide_call(p, &ev, 1, NULL, &cv);
	rules_decide_exec_alias(p, &ev, "/etc/alternatives/editor", &cv);
	ck_assert_str_eq(rules_string(p, cv.rule->id), "exec.not-allowed");

	/* A rule that named the program as it is decided already: the alias
	 * does not undo a deny. */
	ev.exe = "/usr/bin/nc.openbsd";
	ev.argv = nc_argv;
	ev.argc = 3;
	rules_decide_call(p, &ev, 1, NULL, &cv);
	ck_assert_str_eq(rules_string(p, cv.rule->id), "exec.nc-e");
	rules_decide_exec_alias(p, &ev, "/etc/alternatives/nc", &cv);
	ck_assert_int_eq(cv.action, DENY);
	ck_assert_str_eq(rules_string(p, cv.rule->id), "exec.nc-e");

	/* The alias may find a deny too. */
	ev.exe = "/usr/bin/pwn-tool";
	rules_decide_call(p, &ev, 1, NULL, &cv);
	rules_decide_exec_alias(p, &ev, "/etc/alternatives/pwn", &cv);
	ck_assert_int_eq(cv.action, DENY);
	ck_assert_str_eq(rules_string(p, cv.rule->id), "exec.pwn");
	free(p);
}
END_TEST

/* rules_write_root_ancestor(): the directories a command makes on its way
 * to what an allow or alert rule admits. */
START_TEST(test_write_root_ancestor)
{
	static const struct bb_rule rules[] = {
		{ W, ALLOW, "/h/go/pkg/**", "write.go", { NULL } },
		{ W, ALERT, "/h/.local/lib/python*/site-packages/**", "write.user-site", { NULL } },
		{ W, ALLOW, "/h/.config/app/settings.json", "write.settings", { NULL } },
		{ W, DENY, "/h/.ssh/**", "write.ssh", { NULL } },
	};
	static const struct { const char *path; bool on; } cases[] = {
		{ "/", true }, { "/h", true }, { "/h/go", true }, { "/h/go/", true },
		{ "/h/gox", false }, { "/h/.local", true }, { "/h/.local/lib", true },
		{ "/h/.local/lib/python3.11", true }, { "/h/.local/lib/ruby", false },
		{ "/h/.config/app", true }, { "/h/.config/app/settings.json", false },
		{ "/h/.config/other", false }, { "/h/.ssh", false }, { "relative", false },
	};
	struct bb_policy def = { .rules = rules, .n_rules = N(rules) };
	struct rules_policy *p = bb_build(&def, NULL);

	for (size_t i = 0; i < N(cases); i++)
		ck_assert_msg(rules_write_root_ancestor(p, cases[i].path) == cases[i].on, "%s: %s",
			      cases[i].path, cases[i].on ? "expected on the way" : "expected not");
	ck_assert(!rules_write_root_ancestor(p, NULL));
	free(p);
}
END_TEST

/* rules_read_alert_reach(): where a directory moved could bring a file
 * a read alert rule names (the look of the supervisor's masks is made
 * again then). */
START_TEST(test_read_alert_reach)
{
	static const struct bb_rule rules[] = {
		{ R, ALERT, "/r/**/.env*", "read.env", { "/r/**/node_modules/**", "/r/**/.env.example" } },
		{ R, DENY, "/h/.ssh/id_*", "read.ssh", { NULL } },
	};
	static const struct { const char *path; bool reach; } cases[] = {
		{ "/r", true }, { "/r/stage", true }, { "/r/stage/", true }, { "/r/a/b", true }, { "/", true },
		{ "/r/node_modules", false }, { "/r/node_modules/pkg", false },
		{ "/r/a/node_modules/pkg/lib", false }, { "/usr/lib", false }, { "/h/.ssh", false },
		{ "relative", false },
	};
	struct bb_policy def = { .rules = rules, .n_rules = N(rules) };
	struct rules_policy *p = bb_build(&def, NULL);

	for (size_t i = 0; i < N(cases); i++)
		ck_assert_msg((rules_read_alert_reach(p, cases[i].path) != NULL) == cases[i].reach,
			      "%s: %s", cases[i].path, cases[i].reach ? "expected reach" : "expected none");
	free(p);
}
END_TEST

/* Deny rules that judge content: set aside, the rest of the policy
 * decides (rules_decide_call_beside_content); the directories on the way to
 * what they name (rules_content_on_the_way). */
START_TEST(test_content)
{
	static const struct bb_rule rules[] = {
		{ W, ALLOW, "/r/**", "write.root", { NULL } },
		{ W, DENY, "/r/**/.git/hooks/**", "write.git-hooks", { NULL } },
		{ W, DENY, "/r/**/.git/config", "write.git-config", { "/r/**/node_modules/**" } },
		{ W, DENY, "/r/**/.git/modules/**/config", "write.git-config-modules",
		  { "/r/**/.git/modules/**/refs/**", "/r/**/node_modules/**" } },
		{ W, DENY, "/r/**/.git/worktrees/*/config.worktree", "write.git-config-wt",
		  { "/r/**/node_modules/**" } },
		{ W, DENY, "/r/**/.gitmodules", "write.gitmodules", { "/r/**/node_modules/**" } },
		{ W, DENY, "/r/lit/.git-literal", "write.git-literal", { NULL } },
	};
	static const struct { const char *path; const char *plain, *beside; } decide[] = {
		{ "/r/.git/config", "write.git-config", "write.root" },
		{ "/r/sub/.git/config", "write.git-config", "write.root" },
		{ "/r/.git/modules/sm/config", "write.git-config-modules", "write.root" },
		{ "/r/.git/hooks/pre-commit", "write.git-hooks", "write.git-hooks" },
		{ "/r/.git/config.lock", "write.root", "write.root" },
		{ "/elsewhere/.git/config", "write.fallback", "write.fallback" },
	};
	static const struct { const char *path; const char *rule; } way[] = {
		{ "/r/.git", "write.git-config" },
		{ "/r/.git/", "write.git-config" },
		{ "/r/a/b/.git", "write.git-config" },
		{ "/r/node_modules/p/.git", NULL },
		{ "/r/.git/modules", "write.git-config-modules" },
		{ "/r/.git/modules/sm", "write.git-config-modules" },
		{ "/r/.git/modules/a/modules/b", "write.git-config-modules" },
		{ "/r/.git/modules/sm/refs", NULL },
		{ "/r/.git/worktrees", "write.git-config-wt" },
		{ "/r/.git/worktrees/wt1", "write.git-config-wt" },
		/* .gitmodules lies in any directory: renaming one moves it from
		 * one judged place to another */
		{ "/r/x", NULL },
		/* a literal pattern: each directory above it */
		{ "/r/lit", "write.git-literal" }, { "/r", "write.git-literal" },
		{ "/r/sub", NULL }, { "/r/.gitx", NULL }, { "/r/.git/hooks", NULL },
		{ "/", NULL }, { "/elsewhere/.git", NULL }, { "relative/.git", NULL },
	};
	static const struct { const char *path; const char *rule; } named[] = {
		{ "/r/sub/.git", "write.git-config" },
		{ "/r/.git/modules", "write.git-config-modules" },
		{ "/r/.git/modules/sm", NULL },
		{ "/r/.git/modules/sm/tXYZ", NULL },
		{ "/r/.git/worktrees", "write.git-config-wt" },
		{ "/r/.git/worktrees/wt1", NULL },
		{ "/r/lit", "write.git-literal" },
		{ "/r/other", NULL },
	};
	struct bb_policy def = { .rules = rules, .n_rules = N(rules) };
	struct rules_policy *p = bb_build(&def, NULL);
	struct rules_event rename[2] = { { .kind = W, .path = "/r/.git/config.lock" },
					 { .kind = W, .path = "/r/.git/config" } };
	struct rules_call_verdict cv;

	/* blockbuild makes plain rules: the git ones judge content */
	for (uint32_t i = 0; i < p->rules_count; i++) {
		struct rules_rule *r = (struct rules_rule *)rules_rule_at(p, i);

		if (!strncmp(rules_string(p, r->id), "write.git", 9) &&
		    strcmp(rules_string(p, r->id), "write.git-hooks"))
			r->content = RULES_CONTENT_GIT_CONFIG;
	}
	for (size_t i = 0; i < N(decide); i++) {
		struct rules_event ev = { .kind = W, .path = decide[i].path };
		struct rules_verdict v;

		ck_assert_int_eq(rules_decide(p, &ev, &v), 0);
		ck_assert_str_eq(rules_string(p, v.rule->id), decide[i].plain);
		rules_decide_call_beside_content(p, &ev, 1, NULL, &cv);
		ck_assert_str_eq(rules_string(p, cv.rule->id), decide[i].beside);
	}
	for (size_t i = 0; i < N(way); i++) {
		const struct rules_rule *r = rules_content_on_the_way(p, way[i].path, false);

		ck_assert_msg((r != NULL) == (way[i].rule != NULL), "%s: %s", way[i].path,
			      r ? rules_string(p, r->id) : "none");
		if (r)
			ck_assert_str_eq(rules_string(p, r->id), way[i].rule);
	}
	ck_assert_ptr_null(rules_content_on_the_way(p, NULL, false));
	/* NAMED: only a name the pattern has literally (a symlink called
	 * .git, not any link somewhere under .git/modules) */
	for (size_t i = 0; i < N(named); i++) {
		const struct rules_rule *r = rules_content_on_the_way(p, named[i].path, true);

		ck_assert_msg((r != NULL) == (named[i].rule != NULL), "named %s: %s",
			      named[i].path, r ? rules_string(p, r->id) : "none");
	}
	/* What a directory could bring to be judged: anywhere under /r but
	 * node_modules */
	ck_assert_ptr_nonnull(rules_content_reach(p, "/r/x"));
	ck_assert_ptr_nonnull(rules_content_reach(p, "/r"));
	ck_assert_ptr_null(rules_content_reach(p, "/r/node_modules/pkg"));
	ck_assert_ptr_null(rules_content_reach(p, "/tmp/made"));
	rules_decide_call(p, rename, 2, NULL, &cv);
	ck_assert_int_eq(cv.action, DENY);
	ck_assert_uint_eq(cv.event, 1);
	rules_decide_call_beside_content(p, rename, 2, NULL, &cv);
	ck_assert_int_eq(cv.action, ALLOW);
	ck_assert_str_eq(rules_content_name(RULES_CONTENT_GIT_CONFIG), "git-config");
	ck_assert_ptr_null(rules_content_name(RULES_CONTENT_NONE));
	free(p);
}
END_TEST

START_TEST(test_bad_event)
{
	struct rules_policy *p = test_policy(RULES_MODE_ENFORCE, NULL);
	struct rules_event ev = { .kind = RULES_KIND_COUNT, .path = "/x" };
	struct rules_verdict v;

	ck_assert_int_eq(rules_decide(p, &ev, &v), -EINVAL);
	ev.kind = (enum rules_kind)-1;
	ck_assert_int_eq(rules_decide(p, &ev, &v), -EINVAL);
	ev.kind = W;
	ck_assert_int_eq(rules_decide(NULL, &ev, &v), -EINVAL);
	ck_assert_int_eq(rules_decide(p, NULL, &v), -EINVAL);
	ck_assert_int_eq(rules_decide(p, &ev, NULL), -EINVAL);
	free(p);
}
END_TEST

START_TEST(test_mode)
{
	struct rules_policy *enf = test_policy(RULES_MODE_ENFORCE, NULL);
	struct rules_policy *aud = test_policy(RULES_MODE_AUDIT, NULL);
	struct rules_event ev = { .kind = W, .path = "/etc/passwd" };
	struct rules_verdict v;

	/* The verdict is the rule's action; the mode applies afterwards. */
	ck_assert_int_eq(rules_decide(aud, &ev, &v), 0);
	ck_assert_int_eq(v.action, DENY);
	ck_assert_int_eq(rules_effective(aud, v.action), ALERT);
	ck_assert_int_eq(rules_effective(enf, v.action), DENY);
	ck_assert_int_eq(rules_effective(aud, ALERT), ALERT);
	ck_assert_int_eq(rules_effective(aud, ALLOW), ALLOW);
	ck_assert_int_eq(rules_effective(enf, ALERT), ALERT);
	ck_assert_int_eq(rules_effective(enf, ALLOW), ALLOW);
	free(enf);
	free(aud);
}
END_TEST

struct env_case {
	const char *name;
	size_t len; /* 0: strlen(name) */
	bool expect;
};

static const struct env_case env_cases[] = {
	{ "GITHUB_TOKEN", 0, true },
	{ "TOKEN", 0, false },
	{ "GITHUB_TOKENS", 0, false },
	{ "MY_SECRET_KEY", 0, true },
	{ "_SECRET", 0, true },
	{ "AWS_REGION", 0, true },
	{ "AWS_", 0, true },
	{ "aws_region", 0, false },
	{ "PATH", 0, false },
	{ "HOME", 0, false },
	{ "GITHUB_TOKEN=abc", 12, true },   /* bounded by the length */
	{ "PATH=x_TOKEN", 4, false },
	{ "AWS_X", 3, false },
	{ "", 0, false },
};

START_TEST(test_env_drop)
{
	const struct env_case *c = &env_cases[_i];
	struct rules_policy *p = test_policy(RULES_MODE_ENFORCE, NULL);

	ck_assert_msg(rules_env_dropped(p, c->name, c->len ? c->len : strlen(c->name)) == c->expect,
		      "env %s (%zu) != %d", c->name, c->len, c->expect);
	free(p);
}
END_TEST

START_TEST(test_env_none)
{
	struct bb_policy def = { 0 };
	struct rules_policy *p = bb_build(&def, NULL);

	ck_assert(!rules_env_dropped(p, "GITHUB_TOKEN", 12));
	ck_assert(!rules_env_dropped(NULL, "X", 1));
	ck_assert(!rules_env_dropped(p, NULL, 0));
	free(p);
}
END_TEST

START_TEST(test_names)
{
	ck_assert_str_eq(rules_kind_name(RULES_KIND_EXEC), "exec");
	ck_assert_str_eq(rules_kind_name(RULES_KIND_WRITE), "write");
	ck_assert_str_eq(rules_kind_name(RULES_KIND_READ), "read");
	ck_assert_str_eq(rules_kind_name(RULES_KIND_NET), "net");
	ck_assert_str_eq(rules_kind_name(RULES_KIND_COUNT), "unknown");
	ck_assert_str_eq(rules_action_name(RULES_ACTION_ALLOW), "allow");
	ck_assert_str_eq(rules_action_name(RULES_ACTION_ALERT), "alert");
	ck_assert_str_eq(rules_action_name(RULES_ACTION_DENY), "deny");
	ck_assert_str_eq(rules_action_name(RULES_ACTION_COUNT), "unknown");
}
END_TEST

/* ---- rules_policy_check ---- */

static struct rules_rule *rule_by_id(struct rules_policy *p, const char *id)
{
	for (uint32_t i = 0; i < p->rules_count; i++) {
		struct rules_rule *r = (struct rules_rule *)rules_rule_at(p, i);
		if (strcmp(rules_string(p, r->id), id) == 0)
			return r;
	}
	ck_abort_msg("no rule %s", id);
	return NULL;
}

static rules_str *strs_of(struct rules_policy *p)
{
	return (rules_str *)((char *)p + p->strs_off);
}

/* Each breaks one thing; *size is what is passed to the check. */
typedef void corrupt_fn(struct rules_policy *p, size_t *size);

static void c_cut(struct rules_policy *p, size_t *size) { (void)p; *size -= 1; }
static void c_tiny(struct rules_policy *p, size_t *size) { (void)p; *size = sizeof(*p) - 1; }
static void c_hsize(struct rules_policy *p, size_t *size) { p->size = (uint32_t)*size + 1; }
static void c_hsize0(struct rules_policy *p, size_t *size) { (void)size; p->size = 8; }
static void c_magic(struct rules_policy *p, size_t *size) { (void)size; p->magic ^= 1; }
static void c_version(struct rules_policy *p, size_t *size) { (void)size; p->version = RULES_VERSION + 1; }
static void c_mode(struct rules_policy *p, size_t *size) { (void)size; p->mode = 9; }
static void c_record(struct rules_policy *p, size_t *size) { (void)size; p->record = 5; }
static void c_name(struct rules_policy *p, size_t *size) { p->name = (rules_str)*size; }
static void c_layers(struct rules_policy *p, size_t *size) { p->layers = UINT32_MAX; (void)size; }
static void c_rules_off(struct rules_policy *p, size_t *size) { p->rules_off = (uint32_t)*size; }
static void c_rules_align(struct rules_policy *p, size_t *size) { (void)size; p->rules_off += 1; }
static void c_rules_count(struct rules_policy *p, size_t *size) { (void)size; p->rules_count = UINT32_MAX; }
static void c_rules_past(struct rules_policy *p, size_t *size)
{
	p->rules_count = (uint32_t)((*size - p->rules_off) / sizeof(struct rules_rule) + 1);
}
static void c_span_count(struct rules_policy *p, size_t *size) { (void)size; p->span[W][ALLOW].count += 100; }
static void c_span_first(struct rules_policy *p, size_t *size) { (void)size; p->span[W][ALLOW].first = p->rules_count; }
static void c_span_wrap(struct rules_policy *p, size_t *size)
{
	(void)size;
	p->span[W][ALLOW].first = UINT32_MAX;
	p->span[W][ALLOW].count = 2;
}
static void c_span_kind(struct rules_policy *p, size_t *size) { (void)size; p->span[W][DENY] = p->span[X][DENY]; }
static void c_span_action(struct rules_policy *p, size_t *size) { (void)size; p->span[W][DENY] = p->span[W][ALLOW]; }
static void c_fallback(struct rules_policy *p, size_t *size) { (void)size; p->fallback[NET] = p->rules_count; }
static void c_fallback_kind(struct rules_policy *p, size_t *size) { (void)size; p->fallback[NET] = p->fallback[R]; }
static void c_rule_id(struct rules_policy *p, size_t *size) { rule_by_id(p, "write.root")->id = (rules_str)*size; }
static void c_rule_why(struct rules_policy *p, size_t *size) { (void)size; rule_by_id(p, "write.root")->why = UINT32_MAX; }
static void c_unterminated(struct rules_policy *p, size_t *size) { ((char *)p)[*size - 1] = 'x'; }
static void c_rule_kind(struct rules_policy *p, size_t *size) { (void)size; rule_by_id(p, "write.root")->kind = 9; }
static void c_rule_action(struct rules_policy *p, size_t *size) { (void)size; rule_by_id(p, "write.root")->action = 3; }
static void c_text0(struct rules_policy *p, size_t *size) { (void)size; rule_by_id(p, "write.root")->pat.text = 0; }
static void c_text_out(struct rules_policy *p, size_t *size) { rule_by_id(p, "write.tmp")->pat.text = (rules_str)*size + 4; }
static void c_prefix_long(struct rules_policy *p, size_t *size) { (void)size; rule_by_id(p, "write.root")->pat.prefix_len = 6; }
static void c_prefix_magic(struct rules_policy *p, size_t *size) { (void)size; rule_by_id(p, "write.root")->pat.prefix_len = 4; }
static void c_need(struct rules_policy *p, size_t *size) { (void)size; rule_by_id(p, "write.root")->pat.need = ~(uint64_t)0; }
static void c_net_type(struct rules_policy *p, size_t *size) { (void)size; rule_by_id(p, "net.https")->pat.net_type = 9; }
static void c_net_prefix4(struct rules_policy *p, size_t *size) { (void)size; rule_by_id(p, "net.loopback")->pat.prefix = 33; }
static void c_net_prefix6(struct rules_policy *p, size_t *size) { (void)size; rule_by_id(p, "net.loopback6")->pat.prefix = 129; }
static void c_net_family(struct rules_policy *p, size_t *size) { (void)size; rule_by_id(p, "net.loopback")->pat.family = 99; }
static void c_net_ports(struct rules_policy *p, size_t *size)
{
	(void)size;
	rule_by_id(p, "net.https")->pat.port_lo = 444;
}
static void c_net_host(struct rules_policy *p, size_t *size) { (void)size; rule_by_id(p, "net.pyhosted")->pat.text = 0; }
static void c_net_unix(struct rules_policy *p, size_t *size) { rule_by_id(p, "net.unix")->pat.text = (rules_str)*size; }
static void c_unless_first(struct rules_policy *p, size_t *size)
{
	(void)size;
	rule_by_id(p, "write.envrc")->unless_first = UINT32_MAX;
}
static void c_unless_count(struct rules_policy *p, size_t *size)
{
	(void)size;
	rule_by_id(p, "write.envrc")->unless_count = p->patterns_count + 1;
}
static void c_unless_pattern(struct rules_policy *p, size_t *size)
{
	const struct rules_rule *r = rule_by_id(p, "write.envrc");
	struct rules_pattern *pats = (struct rules_pattern *)((char *)p + p->patterns_off);
	pats[r->unless_first].text = (rules_str)*size;
}
static void c_patterns_off(struct rules_policy *p, size_t *size) { p->patterns_off = (uint32_t)*size - 8; }
static void c_patterns_align(struct rules_policy *p, size_t *size) { (void)size; p->patterns_off += 2; }
static void c_argv_first(struct rules_policy *p, size_t *size) { (void)size; rule_by_id(p, "exec.sudo")->pat.argv_first = p->strs_count; }
static void c_argv_count(struct rules_policy *p, size_t *size) { (void)size; rule_by_id(p, "exec.sudo")->pat.argv_count = 0; }
static void c_argv_wrap(struct rules_policy *p, size_t *size)
{
	(void)size;
	rule_by_id(p, "exec.sudo")->pat.argv_first = UINT32_MAX;
	rule_by_id(p, "exec.sudo")->pat.argv_count = 2;
}
static void c_argv_str(struct rules_policy *p, size_t *size)
{
	strs_of(p)[rule_by_id(p, "exec.sudo")->pat.argv_first] = (rules_str)*size + 5;
}
static void c_argv_str0(struct rules_policy *p, size_t *size)
{
	(void)size;
	strs_of(p)[rule_by_id(p, "exec.sudo")->pat.argv_first + 1] = 0;
}
static void c_strs_off(struct rules_policy *p, size_t *size) { p->strs_off = (uint32_t)*size; }
static void c_strs_count(struct rules_policy *p, size_t *size) { (void)size; p->strs_count = UINT32_MAX; }
static void c_env_first(struct rules_policy *p, size_t *size) { (void)size; p->env_drop_first = p->strs_count; }
static void c_env_count(struct rules_policy *p, size_t *size) { (void)size; p->env_drop_count += 1; }
static void c_env_str(struct rules_policy *p, size_t *size) { strs_of(p)[p->env_drop_first] = (rules_str)*size; }

static corrupt_fn *const corruptions[] = {
	c_cut, c_tiny, c_hsize, c_hsize0, c_magic, c_version, c_mode, c_record, c_name,
	c_layers, c_rules_off, c_rules_align, c_rules_count, c_rules_past, c_span_count,
	c_span_first, c_span_wrap, c_span_kind, c_span_action, c_fallback, c_fallback_kind,
	c_rule_id, c_rule_why, c_unterminated, c_rule_kind, c_rule_action, c_text0,
	c_text_out, c_prefix_long, c_prefix_magic, c_need, c_net_type, c_net_prefix4, c_net_prefix6,
	c_net_family, c_net_ports, c_net_host, c_net_unix, c_unless_first, c_unless_count,
	c_unless_pattern, c_patterns_off, c_patterns_align, c_argv_first, c_argv_count,
	c_argv_wrap, c_argv_str, c_argv_str0, c_strs_off, c_strs_count, c_env_first,
	c_env_count, c_env_str,
};

START_TEST(test_check_good)
{
	size_t size;
	struct rules_policy *p = test_policy(RULES_MODE_ENFORCE, &size);
	char *big;

	ck_assert_uint_eq(p->size, size);
	ck_assert_int_eq(rules_policy_check(p, size), 0);
	/* a mapping rounded up to a page holds the same policy */
	big = aligned_alloc(4096, 4096 * ((size + 4095) / 4096 + 1));
	ck_assert_ptr_nonnull(big);
	memcpy(big, p, size);
	ck_assert_int_eq(rules_policy_check(big, 4096 * ((size + 4095) / 4096 + 1)), 0);
	/* misaligned start */
	memmove(big + 1, big, size);
	ck_assert_int_eq(rules_policy_check(big + 1, size), -EINVAL);
	ck_assert_int_eq(rules_policy_check(NULL, size), -EINVAL);
	ck_assert_int_eq(rules_policy_check(p, 0), -EINVAL);
	free(big);
	free(p);
}
END_TEST

START_TEST(test_check_corrupt)
{
	size_t size;
	struct rules_policy *p = test_policy(RULES_MODE_ENFORCE, &size);

	corruptions[_i](p, &size);
	ck_assert_msg(rules_policy_check(p, size) == -EINVAL, "corruption %d accepted", _i);
	free(p);
}
END_TEST

/* Every single-byte change of the block is either refused by the check
 * or leaves a block that decides without reading out of bounds (run this
 * under ASan: --enable-sanitizers). */
START_TEST(test_check_flip)
{
	size_t size;
	struct rules_policy *good = test_policy(RULES_MODE_ENFORCE, &size);
	struct rules_policy *p = malloc(size);
	static const uint8_t flips[] = { 0x01, 0x80, 0xff };
	unsigned accepted = 0, refused = 0;

	ck_assert_ptr_nonnull(p);
	for (size_t off = 0; off < size; off++) {
		for (size_t f = 0; f < N(flips); f++) {
			memcpy(p, good, size);
			((uint8_t *)p)[off] ^= flips[f];
			if (rules_policy_check(p, size) != 0) {
				refused++;
				continue;
			}
			accepted++;
			for (size_t i = 0; i < N(decide_cases); i++) {
				struct rules_event ev;
				struct rules_verdict v;

				case_event(&decide_cases[i], &ev);
				ck_assert_int_eq(rules_decide(p, &ev, &v), 0);
				ck_assert_ptr_nonnull(v.rule);
				(void)rules_string(p, v.rule->id)[0];
			}
			(void)rules_env_dropped(p, "GITHUB_TOKEN", 12);
			(void)rules_string(p, p->name)[0];
		}
	}
	ck_assert_uint_gt(refused, 0);
	ck_assert_uint_gt(accepted, 0);
	free(p);
	free(good);
}
END_TEST

static Suite *decide_suite(void)
{
	Suite *s = suite_create("decide");
	TCase *tc;

	tc = tcase_create("decide");
	tcase_add_loop_test(tc, test_decide, 0, (int)N(decide_cases));
	tcase_add_test(tc, test_fallback_per_kind);
	tcase_add_loop_test(tc, test_exec_identity, 0, (int)N(id_cases));
	tcase_add_test(tc, test_exec_alias);
	tcase_add_test(tc, test_write_root_ancestor);
	tcase_add_test(tc, test_read_alert_reach);
	tcase_add_test(tc, test_content);
	tcase_add_test(tc, test_bad_event);
	tcase_add_test(tc, test_mode);
	tcase_add_loop_test(tc, test_env_drop, 0, (int)N(env_cases));
	tcase_add_test(tc, test_env_none);
	tcase_add_test(tc, test_names);
	suite_add_tcase(s, tc);

	tc = tcase_create("check");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_check_good);
	tcase_add_loop_test(tc, test_check_corrupt, 0, (int)N(corruptions));
	tcase_add_test(tc, test_check_flip);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(decide_suite());
	int failed;

	/* A fork per case costs 0.2 s under ASan; CK_FORK=yes brings the
	 * isolation back when a case crashes. */
	if (!getenv("CK_FORK"))
		srunner_set_fork_status(sr, CK_NOFORK);
	srunner_run_all(sr, CK_ENV);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
