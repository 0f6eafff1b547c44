#!/usr/bin/env bash
# ARCHITECTURE.md's "what one change touches" holds, tests included: in a scratch copy of the
# tree, one of each change it counts — a strategy, a database column of results with its
# migration, a device kind, a command, a C test — is made touching only the files it names (the
# new files, and the entries in the files it names), and then the tree configures, builds with
# -Werror, and the tests that read those tables pass without an edit: the strategies' and the
# device kinds' tests, the job files' messages, the database's migrations and exports, every
# command's help (and the README's lists of strategies and device kinds against the tables),
# the layers, the new C test.  Each change's files are counted (git status in the copy) against
# the table's figures.  One configure and one Debug build of the targets
# those tests need: about two minutes on two cores, so it is labelled long.
set -u
src=${ROOFTUNE_SOURCE_DIR:?ROOFTUNE_SOURCE_DIR is set by CTest}
command -v git >/dev/null || { echo "no git: skipped"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
die() { echo "FAIL: $*"; fail=1; }
tree=$tmp/tree
mkdir -p "$tree"

# the tree as it is (committed or not, what git does not ignore), without any build
if git -C "$src" rev-parse --git-dir >/dev/null 2>&1; then
  (cd "$src" && git ls-files -co --exclude-standard | while IFS= read -r f; do [ -f "$f" ] && printf '%s\n' "$f"; done |
    tar -cf - -T -) | tar -xf - -C "$tree" || { echo "FAIL: cannot copy $src"; exit 1; }
else
  (cd "$src" && tar --exclude='./build*' --exclude=./.git -cf - .) | tar -xf - -C "$tree" ||
    { echo "FAIL: cannot copy $src"; exit 1; }
fi
g() { git -C "$tree" -c user.name=scratch -c user.email=scratch@localhost "$@"; }
g init -q && g add -A && g commit -q -m base || { echo "FAIL: git in the scratch copy"; exit 1; }

# ARCHITECTURE.md's figures for a row: "N new file(s), M entries|edits" or "N files"
figures() {
  local row
  row=$(grep -F "| $1 |" "$tree/ARCHITECTURE.md" | head -1 | cut -d'|' -f3)
  [ -n "$row" ] || { echo "? ?"; return; }
  local new=0 edits
  if [[ $row =~ ([0-9]+)\ new\ files?,\ ([0-9]+)\ (entries|edits) ]]; then
    new=${BASH_REMATCH[1]} edits=${BASH_REMATCH[2]}
  elif [[ $row =~ ([0-9]+)\ files ]]; then
    edits=${BASH_REMATCH[1]}
  else
    edits='?'
  fi
  echo "$new $edits"
}
# counts what the change just made touched against the row, then commits it
counted() {
  local want new edits
  want=$(figures "$1")
  new=$(g status --porcelain --untracked-files=all | grep -c '^??')
  edits=$(g status --porcelain --untracked-files=all | grep -c '^ M')
  if [ "$want" != "$new $edits" ]; then
    die "$1: ARCHITECTURE.md says $(figures "$1" | awk '{print $1 " new, " $2 " edited"}'); it took $new new, $edits edited: $(g status --porcelain --untracked-files=all | tr '\n' ' ')"
  else
    echo "$1: $new new, $edits edited, as ARCHITECTURE.md counts"
  fi
  g add -A && g commit -q -m "$1"
}
# edit FILE: python3 replaces OLD (its first occurrence, which must exist) by NEW
edit() {
  python3 - "$@" <<'PY' || die "cannot edit $1"
import sys
path, old, new = sys.argv[1:4]
s = open(path).read()
assert old in s, (path, old)
open(path, "w").write(s.replace(old, new, 1))
PY
}

# 1. a strategy: its file, its extern, its row, its line in the README's list (first, as its row)
cat >"$tree/search/scratch.c" <<'EOF'
/* scratch.c — a scratch strategy (tests/cli/test_change_counts.sh): uniform picks, the core's
 * fallback. */
#include "search/strategy_internal.h"

const strategy_kind strategy_kind_scratch = {"scratch", 0, NULL, NULL, NULL, NULL};
EOF
edit "$tree/search/strategy_internal.h" "extern const strategy_kind strategy_kind_brute_force;" \
  "extern const strategy_kind strategy_kind_scratch;
extern const strategy_kind strategy_kind_brute_force;"
edit "$tree/search/strategy.c" "static const strategy_kind *const strategy_kinds[] = {" \
  "static const strategy_kind *const strategy_kinds[] = {&strategy_kind_scratch, "
edit "$tree/README.md" "
- \`brute_force\`:" "
- \`scratch\`: uniform picks, a scratch strategy
- \`brute_force\`:"
counted "a strategy"

# 2. a database column of results: the field and its row, the next migration
edit "$tree/core/result.h" "} candidate_result;" "  double scratch_x; /* a scratch column */
} candidate_result;"
python3 - "$tree/core/result.h" <<'PY' || die "cannot add the RESULT_COLUMNS row"
import sys
p = sys.argv[1]
lines = open(p).read().split("\n")
i = next(k for k, l in enumerate(lines) if l.startswith("#define RESULT_COLUMNS("))
while lines[i].rstrip().endswith("\\"):  # to the macro's last line
    i += 1
lines[i] += " \\"
lines.insert(i + 1, '  REST(scratch_x, scratch_x, REAL, scratch_x, "")')
open(p, "w").write("\n".join(lines))
PY
edit "$tree/db/schema.h" "static const char *const schema_migrations[] = {" \
  "static const char schema_scratch[] = \"ALTER TABLE results ADD COLUMN scratch_x REAL NOT NULL DEFAULT 0;\\n\";

static const char *const schema_migrations[] = {"
python3 - "$tree/db/schema.h" <<'PY' || die "cannot add the migration's entry"
import sys
p = sys.argv[1]
s = open(p).read()
i = s.index("static const char *const schema_migrations[] = {")
j = s.index("\n};", i)
open(p, "w").write(s[:j] + "\n    schema_scratch," + s[j:])
PY
counted "a database column of results"

# 3. a device kind: its file, its extern, its row (last), its line in the README's list (last, as
# its row)
cat >"$tree/tuner/device/device_scratch.c" <<'EOF'
/* device_scratch.c — a scratch device kind (tests/cli/test_change_counts.sh): it opens nothing. */
#include "tuner/device/device_impl.h"

static rt_status scratch_open(device *d, const char *arg, rt_error *err) {
  (void)d;
  (void)arg;
  return rt_error_set(err, RT_ERR_INVALID, "the scratch device opens nothing");
}

static rt_status scratch_evaluate(device *d, const device_candidate *c, candidate_result *r,
                                  rt_error *err) {
  (void)d;
  (void)c;
  (void)r;
  return rt_error_set(err, RT_ERR_INVALID, "the scratch device evaluates nothing");
}

const device_ops device_scratch_ops = {
    .kind = {.prefix = "scratch", .syntax = "scratch", .timing = TIMING_PREDICTED},
    .open = scratch_open,
    .evaluate = scratch_evaluate,
};
EOF
edit "$tree/tuner/device/device_impl.h" "extern const device_ops device_model_ops" \
  "extern const device_ops device_scratch_ops;
extern const device_ops device_model_ops"
python3 - "$tree/tuner/device/device.c" <<'PY' || die "cannot add the kind's row"
import re, sys
p = sys.argv[1]
s = open(p).read()
i = s.index("device_kinds[] = {")
j = s.index("};", i)
open(p, "w").write(s[:j].rstrip() + ", &device_scratch_ops" + s[j:])
PY
edit "$tree/README.md" '("Checking without a GPU: the sim device", below).
' '("Checking without a GPU: the sim device", below);
- `--device scratch`: a scratch kind, which opens nothing.
'
counted "a device kind"

# 4. a command: its file
cat >"$tree/cli/cmd_scratch.c" <<'EOF'
/* cmd_scratch.c — `rooftune scratch` (tests/cli/test_change_counts.sh): says so. */
#include "cli/cli.h"

static const char usage[] = "usage: rooftune scratch [--loud]\n\nSays it is a scratch command.\n";

typedef struct scratch_cli {
  int loud; /* --loud */
} scratch_cli;

static const cli_option scratch_table[] = {
    CLI_FLAG(scratch_cli, "loud", loud, "say it in capitals"),
    CLI_END,
};

static int cmd_scratch(int argc, char **argv) {
  scratch_cli cli = {0};
  int arg, bad = cli_options_parse("scratch", NULL, scratch_table, argc, argv, &cli, &arg);
  if (bad) return bad;
  printf(cli.loud ? "SCRATCH\n" : "scratch\n");
  return CLI_EXIT_OK;
}

const cli_command cli_cmd_scratch = {.name = "scratch",
                                     .summary = "a scratch command",
                                     .usage = usage,
                                     .options = scratch_table,
                                     .run = cmd_scratch};
EOF
counted "a command"

# 5. a C test: its file
cat >"$tree/tests/unit/test_scratch.c" <<'EOF'
/* test_scratch.c — a scratch test (tests/cli/test_change_counts.sh): the scratch strategy is
 * listed and the scratch device kind is found. */
/* stages: device search */
#include "search/strategy.h"
#include "test.h"
#include "tuner/device/device.h"

TEST_CASE(scratch_strategy) {
  char list[512];
  CHECK_CONTAINS(strategy_list(0, list, sizeof list), "scratch");
}

TEST_CASE(scratch_device) { CHECK(device_kind_lookup("scratch") != NULL); }

TEST_LIST(TEST_ENTRY(scratch_strategy), TEST_ENTRY(scratch_device))
EOF
counted "a test"

# configure once, build what the tests below need
b=$tmp/build
targets="rooftune unit_test_strategy unit_test_device unit_test_job unit_test_db unit_test_export
         unit_test_db_verified unit_test_job_merge unit_test_scratch"
if ! cmake -S "$tree" -B "$b" -DCMAKE_BUILD_TYPE=Debug -DROOFTUNE_WERROR=ON >"$tmp/configure.log" 2>&1; then
  tail -20 "$tmp/configure.log"
  echo "FAIL: the changed tree does not configure"
  exit 1
fi
# shellcheck disable=SC2086
if ! nice cmake --build "$b" -j "${ROOFTUNE_JOBS:-2}" --target $targets >"$tmp/build.log" 2>&1; then
  grep -E "error|warning" "$tmp/build.log" | head -20
  echo "FAIL: the changed tree does not build with -Werror"
  exit 1
fi
tests='^(unit_test_(strategy|device|job|db|export|db_verified|job_merge|scratch)|cli_test_(help|layers))$'
ctest --test-dir "$b" -R "$tests" --output-on-failure >"$tmp/ctest.log" 2>&1 ||
  die "the tests that read the tables fail on the changed tree: $(grep -E 'Failed|FAIL' "$tmp/ctest.log" | head -20)"
n=$(grep -c "Test *#.*Passed" "$tmp/ctest.log")
[ "$n" = 10 ] || die "$n of the 10 tests passed: $(grep 'Test *#' "$tmp/ctest.log")"

# and each change is live: listed where a user reads the lists, stored, found
bin=$b/rooftune
"$bin" replay --help | grep -q "scratch" || die "replay --help does not offer the scratch strategy"
"$bin" tune --help | grep -q "| scratch" || die "tune --help does not offer the scratch device"
[ "$("$bin" scratch)" = scratch ] || die "rooftune scratch: $("$bin" scratch 2>&1)"
"$bin" --help | grep -q "^  scratch" || die "rooftune --help does not list the scratch command"
"$bin" db import "$tree/tests/data/replay/small.json" --db "$tmp/s.db" --family gemm --shape 64x64x64 \
  --dtype f32 >/dev/null || die "db import into a new database"
"$bin" db export --db "$tmp/s.db" -o "$tmp/s.json" || die "db export"
python3 - "$tmp/s.db" "$("$bin" --version)" "$tmp/s.json" <<'PY' || die "the new column or schema version"
import json, re, sqlite3, sys
v = int(re.search(r"database schema (\d+)", sys.argv[2]).group(1))
c = sqlite3.connect(sys.argv[1])
assert c.execute("PRAGMA user_version").fetchone()[0] == v, sys.argv[2]
assert "scratch_x" in [r[1] for r in c.execute("PRAGMA table_info(results)")]
assert "scratch_x" in json.dumps(json.load(open(sys.argv[3]))), "the export has no scratch_x"
PY
[ $fail = 0 ] && echo "five changes made with the files ARCHITECTURE.md counts; $n tests pass on them"
exit $fail
