#!/usr/bin/env bash
# The test registry (tests/test.h) as a user runs it: every case, one case by name, --list, an
# unknown name (exit 2, naming it and listing the cases), a failing case named in the output
# (exit 1), a skipping case (the others still run), every case skipped and a setup that skips
# (exit 77, CTest's skip).  Runs tests/unit/test_registry.c's binary.
set -u
t="$(dirname "${ROOFTUNE_BIN:?ROOFTUNE_BIN is set by CTest}")/tests/unit_test_registry"
[ -x "$t" ] || { echo "FAIL: no $t: build the tests first"; exit 1; }
fail=0
expect() { # expect DESCRIPTION RC TEXT ENV_DEMO ARGS...: exit code and a piece of the output
  local what=$1 rc=$2 text=$3 demo=$4
  shift 4
  local out got
  out=$(ROOFTUNE_REGISTRY_DEMO=$demo "$t" "$@" 2>&1)
  got=$?
  [ "$got" = "$rc" ] || { echo "FAIL: $what: exit $got, expected $rc"; printf '%s\n' "$out"; fail=1; }
  case "$out" in *"$text"*) ;; *) echo "FAIL: $what: no \"$text\" in:"; printf '%s\n' "$out"; fail=1 ;; esac
}
expect "every case" 0 "ok   last (2 checks)" "" 
expect "every case, in order" 0 "teardown after 3 case(s), 1 setup" ""
expect "--list" 0 "first
skipping
last" "" --list
expect "one case by name" 0 "teardown after 1 case(s)" "" last
expect "two cases, in the order named" 0 "ok   last (2 checks)
ok   first (3 checks)" "" last first
expect "an unknown name" 2 "no case named 'nope'" "" first nope
expect "an unknown name lists the cases" 2 "  skipping" "" nope
expect "an unknown option" 2 "unknown option '--nope'" "" --nope
expect "a failing check names its case" 1 "first: check failed: !demo(\"fail\")" fail
expect "a failing case" 1 "FAIL first: 1 of 3 checks failed" fail
expect "a skipping case" 0 "skip skipping: ROOFTUNE_REGISTRY_DEMO asked this case to skip" skip
expect "the others still run" 0 "ok   last" skip
expect "every case skipped" 77 "SKIP: ROOFTUNE_REGISTRY_DEMO asked this case to skip (every case" skip_all skipping last
expect "a skipping setup" 77 "SKIP: the whole file skips in its setup" skip_file
[ $fail = 0 ] && echo "ok: the registry runs cases by name, names failures and skips"
exit $fail
