/* catalog.h — where templates and declared families are found: the template search path, the
 * manifests and family declarations in it, and a template found by name.
 *
 * The search path is a list of folders, searched in order:
 *   1. the folders of $ROOFTUNE_TEMPLATE_PATH (colon-separated; `--templates DIR` on the command
 *      line puts DIR in front of it), so a user's own templates come first;
 *   2. the shipped templates: $ROOFTUNE_TEMPLATE_DIR when set (a relocated installation), else
 *      the source tree's templates/ when the running program is the build's own (it lives under
 *      the build folder), else the installed <datadir>/rooftune/templates.  An installed
 *      rooftune never reads the source tree it was built from.
 * In each folder, the files FOLDER/NAME.json and FOLDER/SUB/NAME.json are read by what they are
 * (catalog_classify): family.json declares a family (kernels/declared.h); a manifest is a
 * NAME.json beside its NAME.cu (or .cuh), or a JSON object with the "family" or "source" field
 * every manifest has (a text that is not JSON counts when it names one of those fields, so a
 * manifest with a syntax error is still reported as one); any other .json (an editor's
 * settings, a result written beside the templates) is skipped, and catalog_skipped says why.
 * A template name (or a family name) defined in two places is an error that names both, never
 * a silent shadowing.
 * Paths are passed around as one text, the folders joined by ':'.
 */
#ifndef ROOFTUNE_CATALOG_H
#define ROOFTUNE_CATALOG_H

#include <stddef.h>

#include "core/status.h"
#include "template/manifest.h"

#define CATALOG_MAX_DIRS 32

/* The search path above, written into buf (folders joined by ':'); returns buf. */
const char *catalog_path(char *buf, size_t size);
/* The shipped templates' folder alone (step 2 above); returns buf. */
const char *catalog_shipped_dir(char *buf, size_t size);
/* Puts DIR in front of $ROOFTUNE_TEMPLATE_PATH for this process and the workers it starts
 * (what `--templates DIR` does).  RT_ERR_INVALID when DIR is not a folder. */
rt_status catalog_add_dir(const char *dir, rt_error *err);

/* What a .json file of the path is (above).  For CATALOG_OTHER, why (may be NULL) says why it is
 * not read as a manifest ("a JSON object without the \"family\" and \"source\" fields a
 * manifest has"). */
typedef enum catalog_kind { CATALOG_MANIFEST, CATALOG_FAMILY, CATALOG_OTHER } catalog_kind;
catalog_kind catalog_classify(const char *path, char *why, size_t size);

/* Every manifest of the path (NULL: catalog_path()), folder by folder in path order, sorted
 * within a folder.  A missing folder contributes nothing.  Free with catalog_list_free. */
rt_status catalog_list(const char *path, char ***paths, int *count, rt_error *err);
/* Every family.json of the path, in the same order. */
rt_status catalog_families(const char *path, char ***paths, int *count, rt_error *err);
/* The other .json files of the path, skipped, in the same order, each as "FILE: why" (for a
 * note). */
rt_status catalog_skipped(const char *path, char ***notes, int *count, rt_error *err);
void catalog_list_free(char **paths, int count);

/* Loads the template called NAME from the path (NULL: catalog_path()): the file NAME.json when
 * one exists, else the manifest whose "name" is NAME.  RT_ERR_NOT_FOUND lists the names that
 * exist; RT_ERR_MANIFEST when two manifests of the path are called NAME (both named) or when
 * NAME.json does not load. */
rt_status catalog_find(const char *path, const char *name, manifest **out, rt_error *err);

#endif
