/* schema.h — the tuning database's SQL schema, one migration per version (db_open.c applies them
 * in order, keyed by PRAGMA user_version).  Never edit a released migration: add the next, and
 * its entry in schema_migrations, from which the version this build writes follows. */
#ifndef ROOFTUNE_DB_SCHEMA_H
#define ROOFTUNE_DB_SCHEMA_H

#include <stddef.h>

/* Version 1: devices, ceilings, templates, problems, runs, results, winners.  Every row that
 * can travel between files (runs, results) carries a random uid, so merging twice adds
 * nothing the second time. */
static const char schema_v1[] =
    "CREATE TABLE devices(\n"
    "  id INTEGER PRIMARY KEY,\n"
    "  name TEXT NOT NULL,                 -- 'NVIDIA H200', 'model:h200', 'replay:FILE'\n"
    "  sm_count INTEGER NOT NULL DEFAULT 0,\n"
    "  cc_major INTEGER NOT NULL DEFAULT 0,\n"
    "  cc_minor INTEGER NOT NULL DEFAULT 0,\n"
    "  driver_version INTEGER NOT NULL DEFAULT 0,\n"
    "  UNIQUE(name, sm_count, cc_major, cc_minor, driver_version));\n"
    "CREATE TABLE device_ceilings(\n"
    "  id INTEGER PRIMARY KEY,\n"
    "  device_id INTEGER NOT NULL REFERENCES devices(id),\n"
    "  kind TEXT NOT NULL CHECK(kind IN ('copy_bw','matmul')),\n"
    "  dtype TEXT NOT NULL DEFAULT '',\n"
    "  value REAL NOT NULL,                -- bytes/s (copy_bw) or FLOP/s (matmul)\n"
    "  measured_at TEXT NOT NULL,\n"
    "  UNIQUE(device_id, kind, dtype));\n"
    "CREATE TABLE templates(\n"
    "  id INTEGER PRIMARY KEY,\n"
    "  name TEXT NOT NULL,\n"
    "  family TEXT NOT NULL,\n"
    "  source_hash TEXT NOT NULL,          -- '' for library candidates (cublaslt)\n"
    "  manifest_hash TEXT NOT NULL,\n"
    "  UNIQUE(name, source_hash, manifest_hash));\n"
    "CREATE TABLE problems(\n"
    "  id INTEGER PRIMARY KEY,\n"
    "  family TEXT NOT NULL,\n"
    "  shape TEXT NOT NULL,\n"
    "  dtype TEXT NOT NULL,\n"
    "  layout TEXT NOT NULL DEFAULT '',\n"
    "  dims TEXT NOT NULL,                 -- 'M=4096,N=4096,K=4096', for nearest-shape lookups\n"
    "  UNIQUE(family, shape, dtype, layout));\n"
    "CREATE TABLE runs(\n"
    "  id INTEGER PRIMARY KEY,\n"
    "  uid TEXT NOT NULL UNIQUE DEFAULT (lower(hex(randomblob(16)))),\n"
    "  problem_id INTEGER NOT NULL REFERENCES problems(id),\n"
    "  device_id INTEGER NOT NULL REFERENCES devices(id),\n"
    "  toolkit TEXT NOT NULL,\n"
    "  arch TEXT NOT NULL DEFAULT '',\n"
    "  strategy TEXT NOT NULL DEFAULT '',\n"
    "  seed INTEGER NOT NULL DEFAULT 0,\n"
    "  budget INTEGER NOT NULL DEFAULT 0,\n"
    "  rooftune_version TEXT NOT NULL,\n"
    "  command TEXT NOT NULL DEFAULT '',\n"
    "  started_at TEXT NOT NULL,\n"
    "  finished_at TEXT,\n"
    "  status TEXT NOT NULL CHECK(status IN ('running','done','failed','interrupted')));\n"
    "CREATE TABLE results(\n"
    "  id INTEGER PRIMARY KEY,\n"
    "  uid TEXT NOT NULL UNIQUE DEFAULT (lower(hex(randomblob(16)))),\n"
    "  run_id INTEGER NOT NULL REFERENCES runs(id),\n"
    "  problem_id INTEGER NOT NULL REFERENCES problems(id),\n"
    "  device_id INTEGER NOT NULL REFERENCES devices(id),\n"
    "  template_id INTEGER NOT NULL REFERENCES templates(id),\n"
    "  toolkit TEXT NOT NULL,\n"
    "  config TEXT NOT NULL,\n"
    "  status TEXT NOT NULL,               -- rt_status_name(): 'OK', 'ERR_COMPILE', ...\n"
    "  detail TEXT NOT NULL DEFAULT '',\n"
    "  timing TEXT NOT NULL CHECK(timing IN ('measured','predicted','replayed')),\n"
    "  time_ms REAL, spread REAL, repetitions INTEGER, verify_error REAL,\n"
    "  flops REAL, dram_bytes REAL,\n"
    "  registers INTEGER, smem_static INTEGER, smem_dynamic INTEGER, spill_stores INTEGER,\n"
    "  spill_loads INTEGER, stack_bytes INTEGER, threads_per_block INTEGER,\n"
    "  blocks_per_sm INTEGER, occupancy REAL, limiter TEXT, grid_blocks INTEGER,\n"
    "  diag_limit TEXT, diag_lever TEXT, diag_sentence TEXT, achieved_flops REAL,\n"
    "  achieved_bw REAL, flops_frac REAL, bw_frac REAL, intensity REAL, ridge REAL,\n"
    "  waves REAL, tail REAL,\n"
    "  created_at TEXT NOT NULL);\n"
    "CREATE INDEX results_key ON results(problem_id, device_id, template_id, toolkit, config);\n"
    "CREATE INDEX results_run ON results(run_id);\n"
    "CREATE TABLE winners(\n"
    "  id INTEGER PRIMARY KEY,\n"
    "  problem_id INTEGER NOT NULL REFERENCES problems(id),\n"
    "  device_id INTEGER NOT NULL REFERENCES devices(id),\n"
    "  template_id INTEGER NOT NULL REFERENCES templates(id),\n"
    "  toolkit TEXT NOT NULL,\n"
    "  result_id INTEGER NOT NULL REFERENCES results(id),\n"
    "  cubin BLOB,                         -- NULL for a library winner\n"
    "  entry TEXT NOT NULL DEFAULT '', arch TEXT NOT NULL DEFAULT '',\n"
    "  grid_x TEXT NOT NULL DEFAULT '', grid_y TEXT NOT NULL DEFAULT '',\n"
    "  grid_z TEXT NOT NULL DEFAULT '', block_x TEXT NOT NULL DEFAULT '',\n"
    "  block_y TEXT NOT NULL DEFAULT '', block_z TEXT NOT NULL DEFAULT '',\n"
    "  smem TEXT NOT NULL DEFAULT '',\n"
    "  grid_vx INTEGER NOT NULL DEFAULT 0, grid_vy INTEGER NOT NULL DEFAULT 0,\n"
    "  grid_vz INTEGER NOT NULL DEFAULT 0, block_vx INTEGER NOT NULL DEFAULT 0,\n"
    "  block_vy INTEGER NOT NULL DEFAULT 0, block_vz INTEGER NOT NULL DEFAULT 0,\n"
    "  smem_v INTEGER NOT NULL DEFAULT 0,\n"
    "  vars TEXT NOT NULL DEFAULT '',\n"
    "  library_algo TEXT NOT NULL DEFAULT '',\n"
    "  updated_at TEXT NOT NULL,\n"
    "  UNIQUE(problem_id, device_id, template_id, toolkit));\n";

/* Version 2: cubins move to their own table, so reading winners (the runtime's index, lists,
 * exports) never walks a cubin's overflow pages; winners keep the size. */
static const char schema_v2[] =
    "CREATE TABLE winner_cubins(\n"
    "  winner_id INTEGER PRIMARY KEY REFERENCES winners(id),\n"
    "  cubin BLOB NOT NULL);\n"
    "INSERT INTO winner_cubins(winner_id, cubin)\n"
    "  SELECT id, cubin FROM winners WHERE cubin IS NOT NULL AND length(cubin) > 0;\n"
    "ALTER TABLE winners DROP COLUMN cubin;\n"
    "ALTER TABLE winners ADD COLUMN cubin_bytes INTEGER NOT NULL DEFAULT 0;\n"
    "UPDATE winners SET cubin_bytes =\n"
    "  (SELECT length(c.cubin) FROM winner_cubins c WHERE c.winner_id = winners.id)\n"
    "  WHERE id IN (SELECT winner_id FROM winner_cubins);\n";

/* Version 3: results remember what was run (code_hash: compiled source, options, toolkit,
 * geometry), so resuming matches a configuration by its code across manifest edits; problems
 * keep their data beyond the shape text (args: per-sequence KV lengths, named in the shape by a
 * digest). */
static const char schema_v3[] =
    "ALTER TABLE results ADD COLUMN code_hash TEXT NOT NULL DEFAULT '';\n"
    "ALTER TABLE problems ADD COLUMN args TEXT NOT NULL DEFAULT '';  -- the problem's data beyond\n"
    "                                              -- its shape (attention: the KV lengths)\n"
    "CREATE INDEX results_code ON results(problem_id, device_id, toolkit, code_hash);\n";

/* Version 4: what serving another shape needs, beside each winner (librooftune reads no
 * manifest): the tuned problem's environment, the derived values and constraints that read the
 * shape.  Winners stored before it have none and are served for their own shape only. */
static const char schema_v4[] =
    "CREATE TABLE winner_recipes(\n"
    "  winner_id INTEGER PRIMARY KEY REFERENCES winners(id),\n"
    "  env TEXT NOT NULL,                  -- 'M=4096,...,dtype_bytes=2,device.sm_count=132'\n"
    "  derived TEXT NOT NULL,              -- 'NAME=EXPR' lines, in evaluation order\n"
    "  constraints TEXT NOT NULL);         -- one expression a line\n";

/* Version 5: which process runs a run (so a killed run can be told from a live one and marked
 * interrupted), and claims: a configuration a running tuner is evaluating, so a second tuner
 * of the same problem waits for its result instead of evaluating it again.  A claim is
 * released when its result is stored or its run finishes, and expires when its run's process
 * is gone (same machine) or has not been heard from for a lease (another machine). */
static const char schema_v5[] =
    "CREATE TABLE run_owners(\n"
    "  run_id INTEGER PRIMARY KEY REFERENCES runs(id),\n"
    "  host TEXT NOT NULL,                 -- gethostname()\n"
    "  boot_id TEXT NOT NULL DEFAULT '',   -- the kernel's boot id: a pid means something only "
    "within one\n"
    "  pid INTEGER NOT NULL,\n"
    "  pid_start INTEGER NOT NULL DEFAULT 0, -- the process's start time (clock ticks since boot)\n"
    "  beat_at INTEGER NOT NULL);          -- unix time of the run's last write\n"
    "CREATE TABLE claims(\n"
    "  problem_id INTEGER NOT NULL REFERENCES problems(id),\n"
    "  device_id INTEGER NOT NULL REFERENCES devices(id),\n"
    "  toolkit TEXT NOT NULL,\n"
    "  key TEXT NOT NULL,                  -- db_result_key(): 'code:HASH' or "
    "'config:TEMPLATE:CONFIG'\n"
    "  run_id INTEGER NOT NULL REFERENCES runs(id),\n"
    "  claimed_at INTEGER NOT NULL,\n"
    "  PRIMARY KEY(problem_id, device_id, toolkit, key));\n";

/* Version 6: what a result computed in (precision), the concrete move its lever proposes, which
 * facts of its diagnosis were measured, a winner's "why this wins" sentence, the hardware
 * counters read for the best candidates (CUPTI), and per-template calibrations of the cost
 * formulas' DRAM bytes against measured ones (what the model device scales its bytes by). */
static const char schema_v6[] =
    "ALTER TABLE results ADD COLUMN precision TEXT NOT NULL DEFAULT '';\n"
    "ALTER TABLE results ADD COLUMN diag_move TEXT NOT NULL DEFAULT '';\n"
    "ALTER TABLE results ADD COLUMN diag_basis TEXT NOT NULL DEFAULT '';\n"
    "ALTER TABLE results ADD COLUMN verdict TEXT NOT NULL DEFAULT '';\n"
    "ALTER TABLE results ADD COLUMN ctr_measured INTEGER NOT NULL DEFAULT 0;\n"
    "ALTER TABLE results ADD COLUMN ctr_dram_read REAL NOT NULL DEFAULT 0;\n"
    "ALTER TABLE results ADD COLUMN ctr_dram_write REAL NOT NULL DEFAULT 0;\n"
    "ALTER TABLE results ADD COLUMN ctr_l2_bytes REAL NOT NULL DEFAULT 0;\n"
    "ALTER TABLE results ADD COLUMN ctr_occupancy REAL NOT NULL DEFAULT 0;\n"
    "ALTER TABLE results ADD COLUMN ctr_tensor_pipe REAL NOT NULL DEFAULT 0;\n"
    "ALTER TABLE results ADD COLUMN ctr_fma_pipe REAL NOT NULL DEFAULT 0;\n"
    "ALTER TABLE results ADD COLUMN ctr_sm_throughput REAL NOT NULL DEFAULT 0;\n"
    "ALTER TABLE results ADD COLUMN ctr_duration_ms REAL NOT NULL DEFAULT 0;\n"
    "ALTER TABLE results ADD COLUMN ctr_stalls TEXT NOT NULL DEFAULT '';\n"
    "CREATE TABLE calibrations(\n"
    "  id INTEGER PRIMARY KEY,\n"
    "  gpu TEXT NOT NULL,                  -- the spec-table GPU the measurements were made on: "
    "'h200'\n"
    "  template TEXT NOT NULL,\n"
    "  kind TEXT NOT NULL CHECK(kind IN ('dram_bytes')),\n"
    "  ratio REAL NOT NULL,                -- measured / modelled, the geometric mean over "
    "samples\n"
    "  samples INTEGER NOT NULL,\n"
    "  measured_at TEXT NOT NULL,\n"
    "  UNIQUE(gpu, template, kind));\n";

/* Version 7: whether a result's output was checked against its family's reference and passed
 * (results.verified), and the instruction path it computed on (results.path: "tc_f16", whose
 * peak is its compute roof; '' for rows stored before).  librooftune launches only verified
 * winners unless a caller asks otherwise.  What an older row records decides it: only a measuring device checks, and it
 * stored a result as OK only after the check passed, with the check's error (verify_error, a
 * number >= 0; a failed check is ERR_WRONG_RESULT and never OK).  So a row is verified when its
 * time was measured, its status is OK and it carries a check's error; every predicted,
 * replayed, imported or failed row, and a measured row without a check's error, is not. */
static const char schema_v7[] =
    "ALTER TABLE results ADD COLUMN verified INTEGER NOT NULL DEFAULT 0 CHECK(verified IN (0,1));\n"
    "UPDATE results SET verified = 1\n"
    "  WHERE timing = 'measured' AND status = 'OK' AND verify_error IS NOT NULL AND verify_error "
    ">= 0;\n"
    "ALTER TABLE results ADD COLUMN path TEXT NOT NULL DEFAULT '';\n";

/* Version 8: every stored cubin carries the SHA-256 of its bytes (winners.cubin_sha256, lowercase
 * hex; '' for a winner without a cubin), written by the store from the bytes it stores and
 * checked by `db check`, merge and librooftune before a load.  A cubin stored before is hashed
 * here from the bytes it has now (rooftune_sha256, the SQL function db_open registers): from
 * the migration on, a change to those bytes is caught; one made before it cannot be told,
 * beyond the length check winners.cubin_bytes has held since schema 2. */
static const char schema_v8[] =
    "ALTER TABLE winners ADD COLUMN cubin_sha256 TEXT NOT NULL DEFAULT '';\n"
    "UPDATE winners SET cubin_sha256 =\n"
    "  (SELECT rooftune_sha256(c.cubin) FROM winner_cubins c WHERE c.winner_id = winners.id)\n"
    "  WHERE id IN (SELECT winner_id FROM winner_cubins);\n";

/* Version 9 (issue 34): where a result's output was checked against its family's reference and
 * passed (results.checked_on): 'gpu' (what verified says), 'sim' (computed on the CPU by the sim
 * device: checked, not verified), '' not checked.  An older row was checked only on a GPU. */
static const char schema_v9[] =
    "ALTER TABLE results ADD COLUMN checked_on TEXT NOT NULL DEFAULT '';\n"
    "UPDATE results SET checked_on = 'gpu' WHERE verified = 1;\n";

static const char *const schema_migrations[] = {
    NULL,      /* version 0: an empty file */
    schema_v1, /* 0 -> 1 */
    schema_v2, /* 1 -> 2 */
    schema_v3, /* 2 -> 3 */
    schema_v4, /* 3 -> 4 */
    schema_v5, /* 4 -> 5 */
    schema_v6, /* 5 -> 6 */
    schema_v7, /* 6 -> 7 */
    schema_v8, /* 7 -> 8 */
    schema_v9, /* 8 -> 9 */
};

/* The schema version this build writes (PRAGMA user_version): the last migration's. */
#define DB_SCHEMA_VERSION ((int)(sizeof schema_migrations / sizeof schema_migrations[0]) - 1)

#endif
