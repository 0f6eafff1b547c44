/* cmd_templates.c — `rooftune templates`: the installed templates, their family, dtypes,
 * architectures and parameters. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tuner/cli/cli.h"
#include "tuner/template/catalog.h"
#include "tuner/template/manifest.h"

static const char usage[] =
    "usage: rooftune templates [--json] [--dir DIR]\n\n"
    "Lists the kernel templates: every DIR/NAME.json and DIR/SUBDIR/NAME.json manifest, with its\n"
    "family, dtypes, target architectures and parameters (each with its values).  The folder is\n"
    "--dir, else $ROOFTUNE_TEMPLATE_DIR, else the source tree's templates/ when rooftune runs\n"
    "from its build folder, else the installed share/rooftune/templates.  A manifest that does\n"
    "not load is reported with its error (file, field, column) and the exit status is 1.  No\n"
    "templates at all is said plainly and is not an error.\n\n"
    "options:\n"
    "  --json      print {\"dir\":..,\"templates\":[{\"name\",\"family\",\"description\",\"dtypes\",\n"
    "              \"archs\",\"instruction\",\"source\",\"params\":{NAME:[values]},\"derived\",\n"
    "              \"constraints\"}],\"errors\":[{\"path\",\"message\"}]}\n"
    "  --dir DIR   read templates from DIR\n";

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
}

static int cmd_templates(int argc, char **argv) {
  int json = 0;
  const char *dir = NULL;
  static const struct option opts[] = {
      {"json", no_argument, 0, 'j'}, {"dir", required_argument, 0, 'd'}, {0, 0, 0, 0}};
  int c;
  while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
    if (c == 'j') json = 1;
    else if (c == 'd') dir = optarg;
    else return cli_bad_option("templates", argc, argv);
  }
  if (optind < argc)
    return cli_usage_error("templates", "unexpected argument '%s'", argv[optind]);
  char dbuf[1024];
  if (!dir) dir = catalog_path(dbuf, sizeof dbuf);
  char **paths;
  int n;
  rt_error err = {0};
  if (catalog_list(dir, &paths, &n, &err)) return cli_fail("templates", &err);
  json_t *root = json_object(), *list = json_array(), *errors = json_array();
  json_object_set_new(root, "dir", json_string(dir));
  int loaded = 0, failed = 0;
  for (int i = 0; i < n; i++) {
    manifest *m;
    rt_error_clear(&err);
    if (manifest_load(paths[i], &m, &err)) {
      char line[1600];
      rt_error_format(&err, line, sizeof line);
      fprintf(stderr, "rooftune templates: %s\n", line);
      json_t *e = json_object();
      json_object_set_new(e, "path", json_string(paths[i]));
      json_object_set_new(e, "message", json_string(line));
      json_array_append_new(errors, e);
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
  json_object_set_new(root, "templates", list);
  json_object_set_new(root, "errors", errors);
  if (json) {
    char *s = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    if (s) printf("%s\n", s);
    free(s);
  } else if (loaded + failed == 0) {
    printf("no templates in %s (set ROOFTUNE_TEMPLATE_DIR or use --dir to read another folder)\n",
           dir);
  }
  json_decref(root);
  return failed ? CLI_EXIT_FAIL : CLI_EXIT_OK;
}

const cli_command cli_cmd_templates = {"templates", "list the kernel templates and their parameters",
                                       usage, cmd_templates, 0};
