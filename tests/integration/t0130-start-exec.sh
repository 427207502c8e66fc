#!/bin/bash
# What every process of a session pays for the preload shim.
# The shim does not depend on libunwind: every exec of an auto-mode session
# would otherwise open and map libunwind and liblzma too (two more seccomp
# stops).  It opens libunwind at the first backtrace of a preload-mode
# denial instead, so backtraces still come, and only where dlopen() is
# safe (preload/ask.c): a fork child that did not load it yet is denied
# all the same, without a backtrace.  Likewise the supervisor opens libelf
# only when a record needs ELF facts or symbol names (tracer/inspect/elfinfo.c).
. "${top_srcdir:-.}/tests/lib.sh"
need_agenttrace

SHIM=$top_builddir/preload/libagenttrace-preload.so
[ -f "$SHIM" ] || skip_all "the shim is not built"

bashrc=$HOME/.bashrc
printf 'orig' >"$bashrc"

# --- the shim's own dependencies -----------------------------------------
assert_no_needed "the shim" "$SHIM" 'libunwind|liblzma'

# --- what the command's processes map ------------------------------------
# cat is dynamic: it loads the shim in both backends.
for b in auto preload; do
	at --backend "$b" -- cat /proc/self/maps >"$OUT" 2>"$ERR"
	assert_eq "$b: cat /proc/self/maps runs" 0 $?
	assert_match "$b: the shim is mapped" "libagenttrace-preload\\.so" "$(cat "$OUT")"
	if grep -Eq 'libunwind|liblzma' "$OUT"; then
		not_ok "$b: libunwind and liblzma are not mapped" "$(grep -E 'libunwind|liblzma' "$OUT")"
	else
		ok "$b: libunwind and liblzma are not mapped"
	fi
done

# --- preload mode: a denial still carries the caller's frames ------------
at --backend preload -- "$TRY" open-write "$bashrc" >"$OUT" 2>"$ERR"
assert_eq "preload: write HOME/.bashrc: errno EACCES" "$EACCES" $?
assert_file_content "preload: HOME/.bashrc unchanged" "$bashrc" orig
assert_rec "preload: the backtrace starts in the calling program (libunwind loaded on demand)" \
	"event == 'alert' and path == '$bashrc' and backend == 'preload' and len(backtrace or []) >= 2 and pre(backtrace[0]['object'], '$ROOT/bin/try-syscall') and any(f['sym'] == 'main' for f in backtrace)"

# A fork child before its exec: no dlopen() there.  Denied all the same;
# a child of a parent that loaded libunwind has frames too.
fork_py='
import os, sys
def w():
    try:
        open(os.environ["HOME"] + "/.bashrc", "w")
        return 0
    except PermissionError:
        return 13
first = sys.argv[1] == "parent-first"
r = w() if first else 13
pid = os.fork()
if pid == 0:
    os._exit(w())
_, st = os.waitpid(pid, 0)
print(r, os.waitstatus_to_exitcode(st))
'
at --backend preload -- "$PYTHON" -c "$fork_py" child-first >"$OUT" 2>"$ERR"
assert_eq "preload: fork child first: denied (EACCES), no crash" "13 13" "$(cat "$OUT")"
assert_rec "preload: fork child first: deny record" "$(deny_expr write write. "$bashrc") and backend == 'preload'"
at --backend preload -- "$PYTHON" -c "$fork_py" parent-first >"$OUT" 2>"$ERR"
assert_eq "preload: parent, then fork child: both denied" "13 13" "$(cat "$OUT")"
assert_eq "preload: parent, then fork child: two deny records with frames" 2 \
	"$(rec_count "$(deny_expr write write. "$bashrc") and len(backtrace or []) >= 1")"
assert_file_content "preload: HOME/.bashrc still unchanged" "$bashrc" orig

# --- the supervisor: libelf only when a record needs it -------------------
if have nm; then
	used=$(nm -D --undefined-only "$AGENTTRACE" | grep -Ec ' g?elf_[a-z_]+(@|$)')
	assert_eq "agenttrace calls no libelf function directly (opened on demand)" 0 "$used"
else
	skip "agenttrace calls no libelf function directly (opened on demand)" "no nm"
fi
# The command's parent is agenttrace; its maps show what it loaded.  A
# linker without --as-needed (the sanitizer build's) keeps libelf linked
# though unused: nothing to see in the maps then.  A root command keeps
# fewer capabilities than the supervisor, and so may not read its maps
# (ptrace access mode): this one keeps them all.
at --keep-caps all -- sh -c 'cat /proc/$PPID/maps' >"$OUT" 2>"$ERR"
assert_eq "auto: the supervisor's maps are readable" 0 $?
if ! { have readelf && readelf -d "$AGENTTRACE" | grep -q 'NEEDED.*libelf'; }; then
	if grep -q 'libelf' "$OUT"; then
		not_ok "a run without records does not map libelf" "$(grep libelf "$OUT")"
	else
		ok "a run without records does not map libelf"
	fi
fi
at --record -- "$TRY" open-write "$bashrc" >"$OUT" 2>"$ERR"
assert_eq "--record: write HOME/.bashrc: errno EACCES" "$EACCES" $?
assert_rec "--record: the exec record has ELF facts (libelf opened on demand)" \
	"event == 'exec' and pre(exe, '$ROOT/bin/try-syscall') and (elf or {}).get('format') == 'elf' and len((elf or {}).get('build_id') or '') > 0"
assert_rec "--record: the alert's backtrace has names (from the ELF symbol tables)" \
	"event == 'alert' and path == '$bashrc' and any(f.get('sym') for f in (backtrace or []))"
