#!/bin/bash
# rules/agenttrace-policy.schema.json, the JSON Schema of the policy
# language (agenttrace-policy(5), JSON SCHEMA), says what the loader says:
# every shipped policy, every valid case of tests/policies/valid and every
# example of agenttrace-policy(5) validates; every invalid case whose error
# is one the schema can express (a structural error of rules/schema.c) is
# rejected.  Errors of pattern syntax, variables, duplicate ids or keys,
# extends and failing tests are the loader's alone.  Checked with Debian's
# python3-jsonschema.
. "$top_srcdir/tests/tools/lib-tools.sh"

SCHEMA=$top_srcdir/rules/agenttrace-policy.schema.json
need_apt_package "$SYS_PYTHON -c 'import jsonschema'" python3-jsonschema ||
	skip_all "python3-jsonschema not installed"

# The checks in Python: one "ok DESC" or "not ok DESC: why" line each.
"$SYS_PYTHON" - "$SCHEMA" "$top_srcdir" >"$SANDBOX/results" 2>&1 <<'PY'
import glob, json, os, re, sys
import jsonschema

schema_path, top = sys.argv[1], sys.argv[2]
schema = json.load(open(schema_path))

def say(good, desc, why=""):
    print(("ok %s" % desc) if good else ("not ok %s: %s" % (desc, why)))

cls = jsonschema.validators.validator_for(schema)
try:
    cls.check_schema(schema)
    say(cls.__name__ == "Draft202012Validator", "the schema is a valid draft 2020-12 schema",
        cls.__name__)
except jsonschema.SchemaError as e:
    say(False, "the schema is a valid draft 2020-12 schema", e.message)
v = cls(schema)

def errors(doc):
    return ["%s: %s" % ("/".join(map(str, e.absolute_path)), e.message)
            for e in v.iter_errors(doc)]

def accepts(desc, path):
    errs = errors(json.load(open(path)))
    say(not errs, desc, "; ".join(errs[:3]))

shipped = sorted(glob.glob(os.path.join(top, "rules", "*.json")))
shipped = [p for p in shipped if not p.endswith(".schema.json")]
say(len(shipped) >= 5, "shipped policies found", str(shipped))
for p in shipped:
    accepts("shipped %s" % os.path.basename(p), p)

valid = sorted(glob.glob(os.path.join(top, "tests/policies/valid/**/*.json"), recursive=True))
say(len(valid) >= 8, "valid cases found", str(len(valid)))
for p in valid:
    accepts("valid %s" % os.path.relpath(p, os.path.join(top, "tests/policies/valid")), p)

# The examples of agenttrace-policy(5): its no-fill blocks holding a JSON
# object, with roff escapes undone; in the SYNOPSIS "[ ... ]" and "{ ... }"
# stand for lists and sections left out, and are validated empty.
roff = open(os.path.join(top, "man/agenttrace-policy.5")).read()
examples = 0
for block in re.findall(r"^\.nf\n(.*?)^\.fi\n", roff, re.S | re.M):
    text = "\n".join(l for l in block.splitlines() if not l.startswith("."))
    text = text.replace("\\-", "-").replace("\\e", "\\").replace("\\(dq", '"')
    if not text.lstrip().startswith("{"):
        continue
    text = text.replace("[ ... ]", "[]").replace("{ ... }", "{}")
    examples += 1
    try:
        doc = json.loads(text)
    except ValueError as e:
        say(False, "agenttrace-policy(5) example %d is JSON" % examples, str(e))
        continue
    errs = errors(doc)
    say(not errs, "agenttrace-policy(5) example %d validates" % examples, "; ".join(errs[:3]))
say(examples >= 3, "agenttrace-policy(5) examples found", str(examples))

# Invalid cases: the errors of rules/schema.c, which a schema can express.
structural = re.compile(
    r": (unknown key |expected (a|an) |must not be empty|must not contain a NUL|id longer than"
    r"|invalid id|empty argv|\"\w+\" is not a pattern of|a \w+ rule object needs|bad size"
    r"|must be greater than 0|must be \"|must be 1 |a test needs|a policy must be a JSON object"
    r"|missing \"agenttrace\"|\"overrides\" belongs to allow rules)")
cases = sorted(glob.glob(os.path.join(top, "tests/policies/invalid/*/")))
expressible = 0
for d in cases:
    name = os.path.basename(d.rstrip("/"))
    expected = open(os.path.join(d, "expected")).read().splitlines()[0]
    if not structural.search(expected):
        continue
    expressible += 1
    try:
        doc = json.load(open(os.path.join(d, "policy.json")))
    except ValueError as e:
        say(False, "invalid %s is JSON" % name, str(e))
        continue
    say(bool(errors(doc)), "invalid %s rejected (%s)" % (name, expected.split(": ", 1)[1]),
        "the schema accepts it")
say(expressible >= 25, "structural invalid cases found", str(expressible))
PY
rc=$?
[ -s "$SANDBOX/results" ] || not_ok "the schema checks ran" "python exited $rc with no output"
while IFS= read -r line; do
	case $line in
	"ok "*) ok "${line#ok }" ;;
	"not ok "*) d=${line#not ok }; not_ok "${d%%: *}" "${d#*: }" ;;
	*) not_ok "schema check output" "$line" ;;
	esac
done <"$SANDBOX/results"

# The loader takes "$schema" (a string) and ignores it; anything else is an
# error at its line and column.
cat >"$ROOT/p.json" <<'JSON'
{
  "$schema": "/usr/share/agenttrace/agenttrace-policy.schema.json",
  "agenttrace": 1,
  "extends": "default"
}
JSON
out=$("$POLICY_TOOL" --root "$ROOT" check "$ROOT/p.json" 2>&1)
assert_eq "check: a \$schema string is accepted" "0" "$?"
printf '{\n  "agenttrace": 1,\n  "$schema": 7\n}\n' >"$ROOT/bad.json"
out=$("$POLICY_TOOL" --root "$ROOT" check "$ROOT/bad.json" 2>&1)
assert_eq "check: a \$schema number is refused" "1" "$?"
assert_match "check: the refusal names file, line and column" \
	"bad\.json:3:14: \\\$schema: expected a string, got an integer" "$out"
