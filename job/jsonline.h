/* jsonline.h — where a value sits in a JSON text: the line an error about a field should name.
 *
 * Jansson reports lines only for syntax errors; a job file's "problems[3].dtype is not a dtype"
 * needs the line too.  jsonline_find() walks the text (already parsed by Jansson, so well
 * formed) along a path of object keys and array indices, "problems[3].dtype", and returns the
 * 1-based line where that value begins.
 */
#ifndef ROOFTUNE_JSONLINE_H
#define ROOFTUNE_JSONLINE_H

#include <stddef.h>

/* The line of the value at PATH in TEXT ("a.b[2].c"; "" is the whole text); for a key that is
 * absent, the line of the innermost object that exists on the way.  0 when TEXT is NULL. */
int jsonline_find(const char *text, const char *path);

/* The lines of the elements of the array at PATH, in one pass (jsonline_find for each of N
 * elements would walk the text N times): up to n into lines; returns how many elements there
 * are (0 when PATH is not an array). */
size_t jsonline_elements(const char *text, const char *path, int *lines, size_t n);

#endif
