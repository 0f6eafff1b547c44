/* cmd_templates.c — `rooftune templates`: the families and templates of the template path,
 * where each came from, its family, dtypes, architectures and parameters, and checks of each
 * (`--check` also compiles each template's covering set on every architecture it names,
 * `--quick` one configuration). */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "compile/compile_pool.h"
#include "compile/cubin_cache.h"
#include "template/catalog.h"
#include "template/cover.h"
#include "kernels/family.h"
#include "model/gpu_spec.h"
#include "template/manifest.h"

static const char usage[] =
    "usage: rooftune templates [--check [--quick]] [--json] [--templates DIR]... [--dir DIR]\n\n"
    "Lists the kernel families declared in family.json files and the kernel templates of the\n"
    "template path, each with where it came from, its family, dtypes, target architectures and\n"
    "parameters (each with its values), and checks each one: its family is known, every name its\n"
    "expressions read is one the family provides, and each family's reference template is in the\n"
    "path (a missing one is blamed on the family.json that names it).  A manifest is a NAME.json\n"
    "beside its NAME.cu, or a JSON object with a \"family\" or \"source\" field; any other .json\n"
    "file is skipped with a note.  The path is the --templates\n"
    "folders, then $ROOFTUNE_TEMPLATE_PATH (colon-separated), then the shipped templates\n"
    "($ROOFTUNE_TEMPLATE_DIR when set, else the source tree's templates/ when rooftune runs from "
    "its build\n"
    "folder, else the installed share/rooftune/templates); --dir lists one folder alone.  "
    "Anything\n"
    "that does not load, check or compile is reported with its error (file, field, line) and the\n"
    "exit status is 1.  No templates at all is said plainly and is not an error.\n";

static json_t *templates_strings(int n, const char *(*get)(const manifest *, int),
                                 const manifest *m) {
  json_t *a = json_array();
  for (int i = 0; i < n; i++) json_array_append_new(a, json_string(get(m, i)));
  return a;
}

static json_t *templates_params(const manifest *m) {
  json_t *o = json_object();
  for (int i = 0; i < manifest_nparams(m); i++) {
    const space_param *p = manifest_param(m, i);
    json_t *vals = json_array();
    for (int j = 0; j < p->count; j++)
      json_array_append_new(
          vals, p->ints ? json_integer((json_int_t)p->ints[j]) : json_string(p->idents[j]));
    json_object_set_new(o, p->name, vals);
  }
  return o;
}

static json_t *templates_json(const manifest *m) {
  json_t *o = json_object();
  json_object_set_new(o, "name", json_string(manifest_name(m)));
  json_object_set_new(o, "family", json_string(manifest_family(m)));
  json_object_set_new(o, "path", json_string(manifest_path(m)));
  json_object_set_new(o, "description", json_string(manifest_description(m)));
  json_object_set_new(o, "dtypes", templates_strings(manifest_ndtypes(m), manifest_dtype, m));
  json_object_set_new(o, "archs", templates_strings(manifest_narchs(m), manifest_arch, m));
  json_object_set_new(o, "instruction", json_string(manifest_instruction(m)));
  json_object_set_new(o, "source", json_string(manifest_source(m)));
  json_object_set_new(o, "params", templates_params(m));
  json_t *d = json_object();
  for (int i = 0; i < manifest_nderived(m); i++)
    json_object_set_new(d, manifest_derived_name(m, i), json_string(manifest_derived_text(m, i)));
  json_object_set_new(o, "derived", d);
  json_object_set_new(o, "constraints",
                      templates_strings(manifest_nconstraints(m), manifest_constraint, m));
  return o;
}

static void templates_join(int n, const char *(*get)(const manifest *, int), const manifest *m,
                           char *buf, size_t size) {
  size_t k = 0;
  buf[0] = '\0';
  for (int i = 0; i < n && k < size; i++) {
    int w = snprintf(buf + k, size - k, "%s%s", i ? ", " : "", get(m, i));
    if (w > 0) k += (size_t)w;
  }
}

static void templates_print(const manifest *m) {
  char dtypes[256], archs[256];
  templates_join(manifest_ndtypes(m), manifest_dtype, m, dtypes, sizeof dtypes);
  templates_join(manifest_narchs(m), manifest_arch, m, archs, sizeof archs);
  printf("%s  (family %s; dtypes %s; archs %s)\n", manifest_name(m), manifest_family(m), dtypes,
         archs);
  if (manifest_description(m)[0]) printf("  %s\n", manifest_description(m));
  double product = 1;
  for (int i = 0; i < manifest_nparams(m); i++) {
    const space_param *p = manifest_param(m, i);
    product *= p->count;
    printf("  %-12s", p->name);
    for (int j = 0; j < p->count; j++) {
      if (p->ints)
        printf("%s%lld", j ? ", " : " ", p->ints[j]);
      else
        printf("%s%s", j ? ", " : " ", p->idents[j]);
    }
    printf("\n");
  }
  printf("  %d parameters, %.0f combinations before %d constraints; source %s\n",
         manifest_nparams(m), product, manifest_nconstraints(m), manifest_source(m));
  printf("  from %s\n", manifest_path(m));
}

/* Checks a loaded manifest against its family: known, and the names its expressions read
 * resolve for the family's example problem on the manifest's first architecture. */
static rt_status check_template(const manifest *m, rt_error *err) {
  const family_ops *fam = family_find(manifest_family(m));
  if (!fam) {
    rt_error_locate(err, manifest_path(m), "family", 0, 0);
    return rt_error_set(err, RT_ERR_MANIFEST,
                        "unknown family '%s' (known: %s; a family of your own is "
                        "declared in a family.json of the template path)",
                        manifest_family(m), family_names());
  }
  problem p;
  rt_vars env;
  const char *arch = manifest_arch(m, 0);
  rt_status s = fam->parse_shape(fam, fam->example_shape, manifest_dtype(m, 0), NULL, &p, err);
  if (!s) s = problem_env(fam, &p, arch_spec_find(arch), gpu_spec_for_arch(arch), &env, err);
  if (s) return s;
  return manifest_check_names(m, &env, err);
}

/* The family's reference template is in the path; a missing one is blamed on what names it:
 * the family.json's "reference", or for a C family the family itself. */
static rt_status check_reference(const family_ops *fam, const char *path, rt_error *err) {
  if (!fam->reference) return RT_OK;
  manifest *r = NULL;
  rt_error e = {0};
  rt_status s = catalog_find(path, fam->reference, &r, &e);
  manifest_free(r);
  if (s == RT_ERR_NOT_FOUND) {
    rt_error_locate(err, fam->declared_in ? fam->declared_in : fam->name, "reference", 0, 0);
    return rt_error_set(err, RT_ERR_NOT_FOUND,
                        "the %s family's reference template %s is not in the template "
                        "path (%.300s)",
                        fam->name, fam->reference, e.text);
  }
  if (s && err) *err = e;
  return s;
}

static void report_error(json_t *errors, const char *path, const rt_error *err) {
  char line[1600];
  rt_error_format(err, line, sizeof line);
  fprintf(stderr, "rooftune templates: %s\n", line);
  json_t *e = json_object();
  json_object_set_new(e, "path", json_string(path));
  json_object_set_new(e, "message", json_string(line));
  json_array_append_new(errors, e);
}

/* ---- --check: one configuration of each template compiled ---- */

/* A compile error as the source file and the compiler's line: NVRTC writes "NAME(LINE): error:
 * ..." with NAME the source's own name (#line 1 "NAME"); an error in an included header keeps
 * the header's name in the text. */
static void locate_compile_error(const manifest *m, const char *arch, const char *message,
                                 const char *what, rt_error *err) {
  const char *name = manifest_source_name(m), *base = strrchr(name, '/');
  base = base ? base + 1 : name;
  size_t n = strlen(base);
  int line = 0;
  const char *text = message;
  if (!strncmp(message, base, n) && message[n] == '(' &&
      sscanf(message + n + 1, "%d", &line) == 1 && line > 0) {
    const char *close = strstr(message + n, "): ");
    if (close) text = close + 3;
  } else {
    line = 0;
  }
  rt_error_set(err, RT_ERR_COMPILE,
               "%s (%s; `rooftune compile %s --arch %s --limit 1 --logs`, with the same "
               "--templates, prints the whole log)",
               text, what, manifest_name(m), arch);
  rt_error_locate(err, manifest_source(m), NULL, line, 0);
}

/* The space of m for the family's example problem on arch, else its other one: the first that
 * admits a configuration.  NULL with why (a note, not an error) when neither does. */
static space *example_space(const manifest *m, const char *arch, const family_ops *fam, problem *p,
                            rt_vars *env, char *why, size_t size) {
  const char *shapes[2] = {fam->example_shape, fam->example_more};
  for (int i = 0; i < 2 && shapes[i]; i++) {
    rt_error e = {0};
    space *sp = NULL;
    if (fam->parse_shape(fam, shapes[i], manifest_dtype(m, 0), NULL, p, &e) ||
        problem_env(fam, p, arch_spec_find(arch), gpu_spec_for_arch(arch), env, &e) ||
        manifest_build_space(m, env, &sp, &e) || space_size(sp) == 0) {
      space_free(sp);
      snprintf(why, size, "no configuration for the %s family's example problem %s on %s (%.300s)",
               fam->name, shapes[i], arch, e.text[0] ? e.text : "an empty space");
      continue;
    }
    return sp;
  }
  return NULL;
}

/* What one arch's check compiles: the covering set of its example space (manifest_cover_space:
 * every value of every parameter, and the pairs the manifest names, once), or with quick its
 * first configuration alone. */
typedef struct check_arch {
  const char *arch;
  space *sp; /* the configurations compiled (owned) */
  problem p;
  rt_vars env;
} check_arch;

/* Compiles every configuration of a->sp in one pool run; the first that fails is the error,
 * located at the source and line.  *regs, *spill: the most any needed. */
static rt_status compile_arch(const manifest *m, const check_arch *a, const char *source,
                              cubin_cache *cache, int *regs, int *spill, rt_error *err) {
  const char *dtype = manifest_dtype(m, 0);
  size_t n = space_size(a->sp);
  compile_job *jobs = calloc(n, sizeof *jobs);
  char **texts = calloc(n, sizeof *texts);
  compile_result *r = calloc(n, sizeof *r);
  rt_status s = jobs && texts && r ? RT_OK : rt_error_set(err, RT_ERR_NOMEM, "out of memory");
  for (size_t i = 0; !s && i < n; i++) {
    s = manifest_config_source(m, a->sp, i, &a->env, dtype, source, &texts[i], err);
    jobs[i] = (compile_job){texts[i], manifest_source_name(m)};
  }
  if (!s) {
    compile_options copt;
    manifest_compile_options(m, a->arch, &copt);
    copt.pch = 1;
    compile_pool_options popt = {0};
    popt.workers = n > 1 ? 2 : 1;
    popt.timeout_s = 600;
    popt.cache = cache;
    compile_pool_stats st;
    s = compile_pool_run(jobs, n, &copt, &popt, r, &st, err);
  }
  for (size_t i = 0; !s && i < n; i++) {
    if (r[i].status != RT_OK) {
      char cfg[800], what[1000];
      space_format_config(a->sp, i, cfg, sizeof cfg);
      snprintf(what, sizeof what, "%s %s for %s, %s, %s %s", manifest_name(m), cfg, a->arch, dtype,
               manifest_family(m), a->p.shape);
      locate_compile_error(m, a->arch, r[i].message[0] ? r[i].message : "the compile failed", what,
                           err);
      s = RT_ERR_COMPILE;
      break;
    }
    if (r[i].report.registers > *regs) *regs = r[i].report.registers;
    int sp = r[i].report.spill_stores + r[i].report.spill_loads;
    if (sp > *spill) *spill = sp;
  }
  for (size_t i = 0; i < n; i++) {
    if (r) compile_result_free(&r[i]);
    if (texts) free(texts[i]);
  }
  free(jobs);
  free(texts);
  free(r);
  return s;
}

/* The configurations arch a's check compiles (a->sp): NULL space with why when there is none. */
static rt_status check_space(const manifest *m, const family_ops *fam, int quick, check_arch *a,
                             char *why, size_t size, rt_error *err) {
  space *ex = example_space(m, a->arch, fam, &a->p, &a->env, why, size);
  a->sp = NULL;
  if (!ex) return RT_OK;
  rt_status s = quick ? RT_OK : manifest_cover_space(m, ex, &a->sp, err);
  if (!s && (!a->sp || space_size(a->sp) == 0)) { /* quick, or nothing varies: the first one */
    space_free(a->sp);
    a->sp = NULL;
    s = space_single(ex, 0, &a->sp, err);
  }
  space_free(ex);
  return s;
}

/* --check: the covering set of m's example space compiled on every architecture m names (quick:
 * its first configuration on the first), into o["check"]; RT_ERR_COMPILE located at the source
 * file and line when one does not compile.  In text mode a line says what compiled. */
static rt_status compile_check(const manifest *m, cubin_cache *cache, int quick, json_t *o,
                               int json, rt_error *err) {
  const family_ops *fam = family_find(manifest_family(m));
  char why[600] = "";
  json_t *c = json_object(), *archs = json_array();
  json_object_set_new(o, "check", c);
  char *source = NULL;
  rt_status s = manifest_read_source(m, &source, err);
  int na = quick ? 1 : manifest_narchs(m), done = 0;
  size_t configs = 0;
  for (int k = 0; !s && k < na; k++) {
    check_arch a = {.arch = manifest_arch(m, k)};
    if ((s = check_space(m, fam, quick, &a, why, sizeof why, err)) || !a.sp) break;
    int regs = 0, spill = 0;
    s = compile_arch(m, &a, source, cache, &regs, &spill, err);
    if (!s) {
      char cfg[800];
      space_format_config(a.sp, 0, cfg, sizeof cfg);
      if (!done) { /* the first configuration, as --quick says it */
        json_object_set_new(c, "config", json_string(cfg));
        json_object_set_new(c, "dtype", json_string(manifest_dtype(m, 0)));
        json_object_set_new(c, "arch", json_string(a.arch));
        json_object_set_new(c, "shape", json_string(a.p.shape));
        json_object_set_new(c, "registers", json_integer(regs));
        json_object_set_new(c, "spill_bytes", json_integer(spill));
      }
      if (!json) {
        size_t nc = space_size(a.sp);
        if (done)
          printf(
              "  compiles too on %s: the same %zu configuration%s: %s%d registers, %d bytes "
              "spilled\n",
              a.arch, nc, nc > 1 ? "s" : "", nc > 1 ? "at most " : "", regs, spill);
        else
          printf("  compiles: %s for %s, %s, %s %s: %d registers, %d bytes spilled%s\n", cfg,
                 a.arch, manifest_dtype(m, 0), fam->name, a.p.shape, regs, spill,
                 nc > 1 ? " (the most of its covering set's configurations, all compiled)" : "");
      }
      json_array_append_new(archs, json_string(a.arch));
      configs += space_size(a.sp);
      done++;
    }
    space_free(a.sp);
  }
  free(source);
  json_object_set_new(c, "archs", archs);
  json_object_set_new(c, "configurations", json_integer((json_int_t)configs));
  if (s) {
    json_object_set_new(c, "status", json_string("compile_error"));
    json_object_set_new(c, "message", json_string(err->text));
  } else if (!done) {
    json_object_set_new(c, "status", json_string("not_compiled"));
    json_object_set_new(c, "message", json_string(why));
    if (!json) printf("  not compiled: %s\n", why);
  } else {
    json_object_set_new(c, "status", json_string("compiled"));
  }
  return s;
}

/* ---- the listing ---- */

typedef struct templates_run {
  const char *dir; /* the path listed */
  int json, check, quick;
  json_t *errors;
  int failed;
  int unlisted;            /* 1: the path could not be listed (said once, by list_families) */
  cubin_cache *cache;      /* --check's; NULL without one */
  const char *checked[64]; /* families whose reference was checked */
  int nchecked;
} templates_run;

/* Checks fam's reference once per run (the templates of a family share it). */
static void reference_once(templates_run *t, const family_ops *fam) {
  for (int i = 0; i < t->nchecked; i++)
    if (!strcmp(t->checked[i], fam->name)) return;
  if (t->nchecked < 64) t->checked[t->nchecked++] = fam->name;
  rt_error err = {0};
  if (check_reference(fam, t->dir, &err)) {
    report_error(t->errors, fam->declared_in ? fam->declared_in : fam->name, &err);
    t->failed++;
  }
}

static void list_skipped(templates_run *t, json_t *root) {
  char **notes = NULL;
  int n = 0;
  json_t *arr = json_array();
  json_object_set_new(root, "skipped", arr);
  if (catalog_skipped(t->dir, &notes, &n, NULL)) return;
  for (int i = 0; i < n; i++) {
    char *sep = strstr(notes[i], ".json: ");
    if (sep) sep[5] = '\0';
    const char *why = sep ? sep + 7 : "";
    fprintf(stderr, "rooftune templates: note: %s is not a template manifest (%s); skipped\n",
            notes[i], why);
    json_t *e = json_object();
    json_object_set_new(e, "path", json_string(notes[i]));
    json_object_set_new(e, "why", json_string(why));
    json_array_append_new(arr, e);
  }
  catalog_list_free(notes, n);
}

static void list_families(templates_run *t, json_t *flist) {
  char **fams = NULL;
  int nf = 0;
  rt_error err = {0};
  if (catalog_families(t->dir, &fams, &nf, &err)) {
    report_error(t->errors, t->dir, &err);
    t->failed++;
    t->unlisted = 1;
    return;
  }
  for (int i = 0; i < nf; i++) {
    const family_ops *f = NULL;
    rt_error_clear(&err);
    if (family_load_file(fams[i], &f, &err)) {
      report_error(t->errors, fams[i], &err);
      t->failed++;
      continue;
    }
    json_t *o = json_object();
    json_object_set_new(o, "name", json_string(f->name));
    json_object_set_new(o, "declared_in", json_string(f->declared_in));
    json_object_set_new(o, "shape", json_string(f->shape_help));
    json_object_set_new(o, "reference", json_string(f->reference ? f->reference : ""));
    json_array_append_new(flist, o);
    if (!t->json)
      printf("family %s  (shape %s; reference %s)\n  declared in %s\n\n", f->name, f->shape_help,
             f->reference ? f->reference : "-", f->declared_in);
    reference_once(t, f);
  }
  catalog_list_free(fams, nf);
}

/* Lists (and checks) every template; returns how many loaded. */
static int list_templates(templates_run *t, json_t *list) {
  char **paths = NULL;
  int n = 0, loaded = 0;
  rt_error err = {0};
  if (t->unlisted) return 0;
  if (catalog_list(t->dir, &paths, &n, &err)) {
    report_error(t->errors, t->dir, &err);
    t->failed++;
    return 0;
  }
  for (int i = 0; i < n; i++) {
    manifest *m;
    rt_error_clear(&err);
    if (manifest_load(paths[i], &m, &err) || check_template(m, &err)) {
      if (!err.source[0]) rt_error_locate(&err, paths[i], NULL, 0, 0);
      report_error(t->errors, paths[i], &err);
      t->failed++;
      continue;
    }
    reference_once(t, family_find(manifest_family(m)));
    json_t *o = templates_json(m);
    if (!t->json) {
      if (loaded) printf("\n");
      templates_print(m);
    }
    rt_error_clear(&err);
    if (t->check && compile_check(m, t->cache, t->quick, o, t->json, &err)) {
      report_error(t->errors, manifest_path(m), &err);
      t->failed++;
    }
    if (t->json)
      json_array_append_new(list, o);
    else
      json_decref(o);
    loaded++;
    manifest_free(m);
  }
  catalog_list_free(paths, n);
  return loaded;
}

static const cli_option templates_table[] = {
    CLI_FLAG(templates_run, "check", check,
             "also compile each template with NVRTC: the covering set of its space\n"
             "for the family's example problem (every value of every parameter, and\n"
             "the pairs its \"cover\" names, once), its first dtype, on every\n"
             "architecture it names, through the cubin cache: a CUDA error is reported\n"
             "with the source file, the compiler's line, the configuration and the\n"
             "architecture.  No GPU is needed"),
    CLI_FLAG(templates_run, "quick", quick,
             "with --check, compile one configuration of each template (the first\n"
             "of its space, on its first architecture)"),
    CLI_FLAG(templates_run, "json", json,
             "print {\"path\":..,\"families\":[{\"name\",\"declared_in\",\"shape\",\n"
             "\"reference\"}],\"templates\":[{\"name\",\"family\",\"path\",\"description\",\n"
             "\"dtypes\",\"archs\",\"instruction\",\"source\",\"params\":{NAME:[values]},\n"
             "\"derived\",\"constraints\"[,\"check\":{\"status\":\"compiled|compile_error|\n"
             "not_compiled\",\"config\",\"dtype\",\"arch\",\"shape\",\"registers\",\n"
             "\"spill_bytes\",\"archs\",\"configurations\",\"message\"}]}],\"skipped\":[{\"path\","
             "\"why\"}],\n"
             "\"errors\":[{\"path\",\"message\"}]}"),
    CLI_TEMPLATES_OPTION("a folder of templates (and family.json files) before the others"),
    CLI_STRING(templates_run, "dir", "DIR", dir, "list only the templates of DIR"),
    CLI_END,
};

static int cmd_templates(int argc, char **argv) {
  templates_run t = {0};
  rt_error err = {0};
  int arg, bad = cli_options_parse("templates", NULL, templates_table, argc, argv, &t, &arg);
  if (bad) return bad;
  if (arg < argc) return cli_usage_error("templates", "unexpected argument '%s'", argv[arg]);
  char dbuf[8192];
  if (!t.dir) t.dir = catalog_path(dbuf, sizeof dbuf);
  if (t.check && cubin_cache_open_default(&t.cache, &err)) {
    fprintf(stderr, "rooftune templates: warning: %s; compiling without the cubin cache\n",
            err.text);
    t.cache = NULL;
  }
  json_t *root = json_object(), *list = json_array(), *flist = json_array();
  t.errors = json_array();
  json_object_set_new(root, "path", json_string(t.dir));
  list_skipped(&t, root);
  list_families(&t, flist);
  int loaded = list_templates(&t, list);
  cubin_cache_close(t.cache);
  json_object_set_new(root, "families", flist);
  json_object_set_new(root, "templates", list);
  json_object_set_new(root, "errors", t.errors);
  if (t.json) {
    char *s = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    if (s) printf("%s\n", s);
    free(s);
  } else if (loaded + t.failed == 0) {
    printf("no templates in %s (add a folder with --templates DIR or $ROOFTUNE_TEMPLATE_PATH)\n",
           t.dir);
  }
  json_decref(root);
  return t.failed ? CLI_EXIT_FAIL : CLI_EXIT_OK;
}

const cli_command cli_cmd_templates = {.name = "templates",
                                       .summary = "list the kernel templates and their parameters",
                                       .usage = usage,
                                       .options = templates_table,
                                       .run = cmd_templates};
