#!/bin/bash
# The shell completions (completions/): the bash ones, sourced here, give
# options, their values (shipped policy names, modes, formats), the
# subcommands and file arguments; with bash-completion loaded too, the
# supervised command is completed as a command line.  Their option lists,
# and those of the zsh one, are exactly what each program's --help lists.
. "$top_srcdir/tests/tools/lib-tools.sh"

BASH_DIR=$top_srcdir/completions/bash
ZSH_FILE=$top_srcdir/completions/zsh/_agenttrace
AT=${AGENTTRACE:-$top_builddir/agenttrace}

# complete_words FUNCTION WORD... -> the completions of the last word, one
# a line, sorted, in a fresh bash that sourced the completion file of
# WORD 1 (and bash-completion first when BASH_COMPLETION is set).
complete_words() {
	local fn=$1
	shift
	bash --norc --noprofile -c '
		fn=$1; shift
		[ -n "$BASH_COMPLETION" ] && . "$BASH_COMPLETION"
		. "$BASH_DIR/$1"
		COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1))
		COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}
		"$fn" "$1" "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
		printf "%s\n" "${COMPREPLY[@]}" | sort -u
	' complete "$fn" "$@"
}
export BASH_DIR
unset BASH_COMPLETION

mkdir -p "$SANDBOX/w" && cd "$SANDBOX/w" || exit 99
: >mine.json
: >run.jsonl
: >notes.txt
mkdir -p sub

lines() { tr '\n' ' ' | sed 's/ $//'; }

assert_eq "agenttrace --pol" "--policy" "$(complete_words _agenttrace agenttrace --pol | lines)"
assert_eq "agenttrace --policy: names and .json files" \
	"agent audit ci default mine.json registries strict sub" \
	"$(complete_words _agenttrace agenttrace --policy '' | lines)"
assert_eq "agenttrace -p s" "strict sub" "$(complete_words _agenttrace agenttrace -p s | lines)"
assert_eq "agenttrace --mode=a" "audit" \
	"$(complete_words _agenttrace agenttrace --mode = a | lines)"
assert_eq "agenttrace --backend p" "preload ptrace" \
	"$(complete_words _agenttrace agenttrace --backend p | lines)"
assert_eq "agenttrace --landlock o" "off on" \
	"$(complete_words _agenttrace agenttrace --landlock o | lines)"
assert_eq "agenttrace --log n: files" "notes.txt" \
	"$(complete_words _agenttrace agenttrace --log n | lines)"
assert_eq "agenttrace --root: directories" "sub" \
	"$(complete_words _agenttrace agenttrace --root '' | lines)"
assert_match "agenttrace --policy strict pw: a command" '(^| )pwd( |$)' \
	"$(complete_words _agenttrace agenttrace --policy strict pw | lines)"
assert_eq "agenttrace -- make --pol: the command's own arguments, not ours" "" \
	"$(complete_words _agenttrace agenttrace -- make --pol | lines)"

assert_eq "agenttrace-policy: the subcommands" "check explain learn replay show" \
	"$(complete_words _agenttrace_policy agenttrace-policy '' | lines)"
assert_eq "agenttrace-policy show: the shipped policies" "agent audit ci default registries strict" \
	"$(complete_words _agenttrace_policy agenttrace-policy show '' | lines)"
assert_eq "agenttrace-policy --root sub check: .json files" "mine.json sub" \
	"$(complete_words _agenttrace_policy agenttrace-policy --root sub check '' | lines)"
assert_eq "agenttrace-policy learn: .jsonl logs" "run.jsonl sub" \
	"$(complete_words _agenttrace_policy agenttrace-policy learn '' | lines)"
assert_eq "agenttrace-policy replay run.jsonl --policy c" "ci" \
	"$(complete_words _agenttrace_policy agenttrace-policy replay run.jsonl --policy c | lines)"

assert_eq "agenttrace-report -f s" "sarif" \
	"$(complete_words _agenttrace_report agenttrace-report -f s | lines)"
assert_eq "agenttrace-report --format=m" "markdown md" \
	"$(complete_words _agenttrace_report agenttrace-report --format = m | lines)"
assert_eq "agenttrace-report: .jsonl logs" "run.jsonl sub" \
	"$(complete_words _agenttrace_report agenttrace-report '' | lines)"

# With bash-completion (as installed): the command and its arguments are
# completed by the command's own completion.
BC=/usr/share/bash-completion/bash_completion
if [ -r "$BC" ]; then
	export BASH_COMPLETION=$BC
	assert_match "bash-completion: agenttrace --mode audit pw" '(^| )pwd( |$)' \
		"$(complete_words _agenttrace agenttrace --mode audit pw | lines)"
	assert_eq "bash-completion: agenttrace -- ls sub/" "" \
		"$(complete_words _agenttrace agenttrace -- ls sub/ | lines)"
	assert_eq "bash-completion: agenttrace --policy s" "strict sub" \
		"$(complete_words _agenttrace agenttrace --policy s | lines)"
	unset BASH_COMPLETION
else
	skip "bash-completion: the command completed as a command line" "$BC not installed"
fi

# The option lists against --help, both directions.
opts_of() { tr ' ' '\n' | grep -E '^-' | sort -u | lines; }
want=$(help_options "$AT" | lines)
assert_eq "bash: agenttrace options = --help" "$want" \
	"$(complete_words _agenttrace agenttrace - | opts_of)"
assert_eq "bash: agenttrace-policy options = --help" "$(help_options "$POLICY_TOOL" | lines)" \
	"$(complete_words _agenttrace_policy agenttrace-policy - | opts_of)"
assert_eq "bash: agenttrace-policy learn options = learn --help" \
	"$(help_options "$POLICY_TOOL" learn | lines)" \
	"$(complete_words _agenttrace_policy agenttrace-policy learn x -- | opts_of) $(complete_words _agenttrace_policy agenttrace-policy learn x - | grep -v -- '^--' | opts_of)"
assert_eq "bash: agenttrace-policy replay options = replay --help" \
	"$(help_options "$POLICY_TOOL" replay | lines)" \
	"$(complete_words _agenttrace_policy agenttrace-policy replay x - | opts_of)"
assert_eq "bash: agenttrace-report options = --help" "$(help_options "$REPORT" | lines)" \
	"$(complete_words _agenttrace_report agenttrace-report - | opts_of)"

# The subcommands and the shipped policies against agenttrace-policy --help.
help=$("$POLICY_TOOL" --help)
assert_eq "bash: subcommands = --help's commands" \
	"$(printf '%s\n' "$help" | sed -n '/^commands:/,/^$/s/^  \([a-z]\{1,\}\) .*/\1/p' | sort | lines)" \
	"$(complete_words _agenttrace_policy agenttrace-policy '' | lines)"
assert_eq "bash: policy names = --help's shipped policies" \
	"$(printf '%s\n' "$help" | sed -n 's/^shipped policies: //p' | tr ' ' '\n' | sort | lines)" \
	"$(complete_words _agenttrace_policy agenttrace-policy show '' | lines)"

# zsh: the option names of each _arguments spec (the part before its
# "[description]"), per program and subcommand.
zsh_opts() { # SECTION-START-REGEX SECTION-END-REGEX
	sed -n "/$1/,/$2/p" "$ZSH_FILE" | grep "\[" | sed 's/\[.*//' |
		grep -oE "(^|[{,'( )*])--?[A-Za-z][A-Za-z-]*" | sed "s/^[{,'( )*]*//" | sort -u | lines
}
assert_eq "zsh: agenttrace options = --help" "$want" \
	"$(zsh_opts '^_agenttrace_main()' '^}')"
assert_eq "zsh: agenttrace-policy options = --help" "$(help_options "$POLICY_TOOL" | lines)" \
	"$(zsh_opts '^_agenttrace_policy_tool()' '1:command:')"
assert_eq "zsh: agenttrace-policy learn options = learn --help" \
	"$(help_options "$POLICY_TOOL" learn | lines)" "$(zsh_opts '^    learn)' ';;')"
assert_eq "zsh: agenttrace-policy replay options = replay --help" \
	"$(help_options "$POLICY_TOOL" replay | lines)" "$(zsh_opts '^    replay)' ';;')"
assert_eq "zsh: agenttrace-report options = --help" "$(help_options "$REPORT" | lines)" \
	"$(zsh_opts '^_agenttrace_report()' '^}')"
if have zsh; then
	check "zsh: the completion parses (zsh -n)" zsh -n "$ZSH_FILE"
	out=$(zsh -f -c 'fpath=("${1%/*}" $fpath); autoload -Uz compinit && compinit -u -d "$2" &&
		print -r -- "$_comps[agenttrace] $_comps[agenttrace-policy] $_comps[agenttrace-report]"' \
		zsh "$ZSH_FILE" "$SANDBOX/zcompdump" 2>&1)
	assert_eq "zsh: compinit binds the three programs" "_agenttrace _agenttrace _agenttrace" "$out"
else
	skip "zsh: the completion parses and binds" "zsh not installed"
fi
