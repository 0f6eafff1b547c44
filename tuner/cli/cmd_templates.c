/* cmd_templates.c — `rooftune templates`: the installed templates, their family, dtypes,
 * architectures and parameters. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tuner/cli/cli.h"
#include "tuner/template/catalog.h"
#include "kernels/family.h"
#include "tuner/model/gpu_spec.h"
#include "tuner/template/manifest.h"

static const char usage[] =
    "usage: rooftune templates [--json] [--templates DIR]... [--dir DIR]\n\n"
    "Lists the kernel families declared in family.json files and the kernel templates (every\n"
    "FOLDER/NAME.json and FOLDER/SUB/NAME.json manifest) of the template path, each with where it\n"
    "came from, its family, dtypes, target architectures and parameters (each with its values),\n"
    "and checks each one: its family is known, every name its expressions read is one the family\n"
    "provides, and the family's reference template is in the path.  The path is the --templates\n"
    "folders, then $ROOFTUNE_TEMPLATE_PATH (colon-separated), then the shipped templates\n"
    "($ROOFTUNE_TEMPLATE_DIR when set, else the source tree's templates/ when rooftune runs from its build\n"
    "folder, else the installed share/rooftune/templates); --dir lists one folder alone.  Anything\n"
    "that does not load or check is reported with its error (file, field, column) and the exit\n"
    "status is 1.  No templates at all is said plainly and is not an error.\n\n"
    "options:\n"
    "  --json           print {\"path\":..,\"families\":[{\"name\",\"declared_in\",\"shape\",\n"
    "                   \"reference\"}],\"templates\":[{\"name\",\"family\",\"path\",\"description\",\n"
    "                   \"dtypes\",\"archs\",\"instruction\",\"source\",\"params\":{NAME:[values]},\n"
    "                   \"derived\",\"constraints\"}],\"errors\":[{\"path\",\"message\"}]}\n"
    "  --templates DIR  a folder of templates (and family.json files) before the others\n"
    "  --dir DIR        list only the templates of DIR\n";

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
      json_array_append_new(vals, p->ints ? json_integer((json_int_t)p->ints[j])
                                          : json_string(p->idents[j]));
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
      if (p->ints) printf("%s%lld", j ? ", " : " ", p->ints[j]);
      else printf("%s%s", j ? ", " : " ", p->idents[j]);
    }
    printf("\n");
  }
  printf("  %d parameters, %.0f combinations before %d constraints; source %s\n",
         manifest_nparams(m), product, manifest_nconstraints(m), manifest_source(m));
  printf("  from %s\n", manifest_path(m));
}

/* Checks a loaded manifest against its family: known, names resolve for the family's example
 * problem on the manifest's first architecture, the family's reference in the path. */
static rt_status check_template(const manifest *m, const char *path, rt_error *err) {
  const family_ops *fam = family_find(manifest_family(m));
  if (!fam) {
    rt_error_locate(err, manifest_path(m), "family", 0, 0);
    return rt_error_set(err, RT_ERR_MANIFEST, "unknown family '%s' (known: %s; a family of your own is "
                        "declared in a family.json of the template path)", manifest_family(m), family_names());
  }
  problem p;
  rt_vars env;
  const char *arch = manifest_arch(m, 0);
  rt_status s = fam->parse_shape(fam, fam->example_shape, manifest_dtype(m, 0), NULL, &p, err);
  if (!s) s = problem_env(fam, &p, arch_spec_find(arch), gpu_spec_for_arch(arch), &env, err);
  if (s) return s;
  if ((s = manifest_check_names(m, &env, err))) return s;
  if (fam->reference && strcmp(fam->reference, manifest_name(m))) {
    manifest *r = NULL;
    rt_error e = {0};
    s = catalog_find(path, fam->reference, &r, &e);
    manifest_free(r);
    if (s) {
      rt_error_locate(err, manifest_path(m), "family", 0, 0);
      return rt_error_set(err, RT_ERR_NOT_FOUND, "the %s family's reference template %s is not in the "
                          "template path (%.300s)", fam->name, fam->reference, e.text);
    }
  }
  return RT_OK;
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

static int cmd_templates(int argc, char **argv) {
  int json = 0;
  const char *dir = NULL;
  static const struct option opts[] = {{"json", no_argument, 0, 'j'},
                                       {"dir", required_argument, 0, 'd'},
                                       {"templates", required_argument, 0, 't'},
                                       {0, 0, 0, 0}};
  int c;
  rt_error err = {0};
  while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
    if (c == 'j') json = 1;
    else if (c == 'd') dir = optarg;
    else if (c == 't') {
      if (catalog_add_dir(optarg, &err)) return cli_fail("templates", &err);
    } else return cli_bad_option("templates", argc, argv);
  }
  if (optind < argc)
    return cli_usage_error("templates", "unexpected argument '%s'", argv[optind]);
  char dbuf[8192];
  if (!dir) dir = catalog_path(dbuf, sizeof dbuf);
  char **paths, **fams;
  int n, nf;
  if (catalog_list(dir, &paths, &n, &err)) return cli_fail("templates", &err);
  if (catalog_families(dir, &fams, &nf, &err)) {
    catalog_list_free(paths, n);
    return cli_fail("templates", &err);
  }
  json_t *root = json_object(), *list = json_array(), *errors = json_array(), *flist = json_array();
  json_object_set_new(root, "path", json_string(dir));
  int loaded = 0, failed = 0;
  for (int i = 0; i < nf; i++) {
    const family_ops *f = NULL;
    rt_error_clear(&err);
    if (family_load_file(fams[i], &f, &err)) {
      report_error(errors, fams[i], &err);
      failed++;
      continue;
    }
    json_t *o = json_object();
    json_object_set_new(o, "name", json_string(f->name));
    json_object_set_new(o, "declared_in", json_string(f->declared_in));
    json_object_set_new(o, "shape", json_string(f->shape_help));
    json_object_set_new(o, "reference", json_string(f->reference ? f->reference : ""));
    json_array_append_new(flist, o);
    if (!json) printf("family %s  (shape %s; reference %s)\n  declared in %s\n\n", f->name, f->shape_help,
                      f->reference ? f->reference : "-", f->declared_in);
  }
  for (int i = 0; i < n; i++) {
    manifest *m;
    rt_error_clear(&err);
    if (manifest_load(paths[i], &m, &err) || check_template(m, dir, &err)) {
      if (!err.source[0]) rt_error_locate(&err, paths[i], NULL, 0, 0);
      report_error(errors, paths[i], &err);
      failed++;
      continue;
    }
    if (json) json_array_append_new(list, templates_json(m));
    else {
      if (loaded) printf("\n");
      templates_print(m);
    }
    loaded++;
    manifest_free(m);
  }
  catalog_list_free(paths, n);
  catalog_list_free(fams, nf);
  json_object_set_new(root, "families", flist);
  json_object_set_new(root, "templates", list);
  json_object_set_new(root, "errors", errors);
  if (json) {
    char *s = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    if (s) printf("%s\n", s);
    free(s);
  } else if (loaded + failed == 0) {
    printf("no templates in %s (add a folder with --templates DIR or $ROOFTUNE_TEMPLATE_PATH)\n", dir);
  }
  json_decref(root);
  return failed ? CLI_EXIT_FAIL : CLI_EXIT_OK;
}

const cli_command cli_cmd_templates = {"templates", "list the kernel templates and their parameters",
                                       usage, cmd_templates, 0};
