#!/usr/bin/env bash
# nightly.sh — a thin wrapper for cron and systemd: runs a tuning job (`rooftune job run`: skips
# fresh problems, rechecks their winners, retunes stale ones, writes report.html into the job's
# output folder), then checks the database and publishes its winners as a C header,
# rooftune_tuned.h, beside the report.
#
#   nightly.sh JOB.json [rooftune job run options, e.g. --device cuda:all]
#
# Exit status: rooftune job run's (0 done, 1 a problem failed, 3 a regression), or 1 when the
# database does not check out or the header cannot be written.  ROOFTUNE: the command (default
# rooftune).
set -u
rt=${ROOFTUNE:-rooftune}
job=${1:?usage: nightly.sh JOB.json [rooftune job run options]}
shift
"$rt" job run "$job" "$@"
status=$?
where=$("$rt" job status "$job" "$@" --json 2>/dev/null |
        python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["database"]); print(d["output"])') || {
  echo "nightly: cannot read the status of $job"
  exit 1
}
db=$(echo "$where" | sed -n 1p)
out=$(echo "$where" | sed -n 2p)
if [ -f "$db" ]; then
  "$rt" db check --db "$db" >/dev/null || { echo "nightly: $db does not check out (see 'rooftune db check --db $db')"; status=1; }
  "$rt" db export --db "$db" --format header -o "$out/rooftune_tuned.h" || status=1
fi
exit $status
