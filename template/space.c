/* space.c — parameters, the valid configurations, and an open-addressing hash index from a
 * configuration to its number.
 *
 * Configurations are stored back to back (nparams uint16_t each) in the order they were added;
 * that order is their numbering.  The index is a power-of-two table, at most half full,
 * probed linearly; a slot holds number + 1 in its low 32 bits (0 = empty) and the high 32 bits
 * of the configuration's hash, so a probe touches the stored configuration only when the tags
 * agree (listing neighbours mostly looks up configurations that are not there).
 */
#include "template/space.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct space {
  int nparams;         /* parameters added */
  int params_cap;      /* allocated entries in params */
  space_param *params; /* the parameters, in order */
  uint16_t *cfgs;      /* n configurations, nparams entries each */
  size_t n;            /* configurations added */
  size_t cap;          /* configurations allocated */
  uint64_t *table;     /* hash index: (hash tag << 32) | (number + 1); 0 when empty */
  size_t table_mask;   /* table size - 1 (a power of two) */
  int finished;        /* space_finish succeeded */
};

space *space_new(void) { return calloc(1, sizeof(space)); }

void space_free(space *s) {
  if (!s) return;
  for (int i = 0; i < s->nparams; i++) {
    space_param *p = &s->params[i];
    free(p->name);
    free(p->ints);
    if (p->idents)
      for (int j = 0; j < p->count; j++) free(p->idents[j]);
    free(p->idents);
  }
  free(s->params);
  free(s->cfgs);
  free(s->table);
  free(s);
}

rt_status space_add_param(space *s, const char *name, int count, const long long *ints,
                          const char *const *idents, rt_error *err) {
  if (!s || !name || !name[0])
    return rt_error_set(err, RT_ERR_INVALID, "space parameter needs a name");
  if (s->n || s->finished)
    return rt_error_set(err, RT_ERR_INVALID,
                        "space parameter %s added after configurations; add parameters first",
                        name);
  if (count < 1 || count > UINT16_MAX)
    return rt_error_set(err, RT_ERR_INVALID, "space parameter %s has %d values; it needs 1 to %d",
                        name, count, UINT16_MAX);
  if ((ints == NULL) == (idents == NULL))
    return rt_error_set(err, RT_ERR_INVALID,
                        "space parameter %s needs either integer or identifier values", name);
  if (space_param_index(s, name) >= 0)
    return rt_error_set(err, RT_ERR_INVALID, "space parameter %s declared twice", name);
  if (s->nparams == s->params_cap) {
    int nc = s->params_cap ? 2 * s->params_cap : 8;
    space_param *np = realloc(s->params, (size_t)nc * sizeof *np);
    if (!np) return rt_error_set(err, RT_ERR_NOMEM, "out of memory adding parameter %s", name);
    s->params = np;
    s->params_cap = nc;
  }
  space_param p = {0};
  p.count = count;
  p.name = strdup(name);
  if (!p.name) goto nomem;
  if (ints) {
    p.ints = malloc((size_t)count * sizeof *p.ints);
    if (!p.ints) goto nomem;
    memcpy(p.ints, ints, (size_t)count * sizeof *p.ints);
  } else {
    p.idents = calloc((size_t)count, sizeof *p.idents);
    if (!p.idents) goto nomem;
    for (int j = 0; j < count; j++) {
      p.idents[j] = strdup(idents[j] ? idents[j] : "");
      if (!p.idents[j]) goto nomem;
    }
  }
  s->params[s->nparams++] = p;
  return RT_OK;
nomem:
  free(p.name);
  free(p.ints);
  if (p.idents)
    for (int j = 0; j < count; j++) free(p.idents[j]);
  free(p.idents);
  return rt_error_set(err, RT_ERR_NOMEM, "out of memory adding parameter %s", name);
}

rt_status space_add_config(space *s, const uint16_t *cfg, rt_error *err) {
  if (s->finished)
    return rt_error_set(err, RT_ERR_INVALID, "configuration added to a finished space");
  if (s->nparams == 0)
    return rt_error_set(err, RT_ERR_INVALID, "configuration added to a space without parameters");
  for (int i = 0; i < s->nparams; i++)
    if (cfg[i] >= s->params[i].count)
      return rt_error_set(err, RT_ERR_INVALID,
                          "configuration value index %u out of range for %s (%d values)",
                          (unsigned)cfg[i], s->params[i].name, s->params[i].count);
  if (s->n >= UINT32_MAX - 1)
    return rt_error_set(err, RT_ERR_INVALID, "space holds too many configurations");
  if (s->n == s->cap) {
    size_t nc = s->cap ? 2 * s->cap : 64;
    uint16_t *nb = realloc(s->cfgs, nc * (size_t)s->nparams * sizeof *nb);
    if (!nb) return rt_error_set(err, RT_ERR_NOMEM, "out of memory adding a configuration");
    s->cfgs = nb;
    s->cap = nc;
  }
  memcpy(s->cfgs + s->n * (size_t)s->nparams, cfg, (size_t)s->nparams * sizeof *cfg);
  s->n++;
  return RT_OK;
}

static uint64_t space_hash(const uint16_t *cfg, int np) {
  uint64_t h = 0x9e3779b97f4a7c15ull;
  int i = 0;
  for (; i + 4 <= np; i += 4) {
    uint64_t w = (uint64_t)cfg[i] | (uint64_t)cfg[i + 1] << 16 | (uint64_t)cfg[i + 2] << 32 |
                 (uint64_t)cfg[i + 3] << 48;
    h = (h ^ w) * 0xbf58476d1ce4e5b9ull;
    h ^= h >> 31;
  }
  for (; i < np; i++) {
    h = (h ^ cfg[i]) * 0x94d049bb133111ebull;
    h ^= h >> 29;
  }
  h ^= h >> 32;
  return h;
}

/* Slot of cfg in the table: the slot holding it, or the empty slot where it would go. */
static size_t space_slot(const space *s, const uint16_t *cfg, uint64_t *tag) {
  uint64_t h = space_hash(cfg, s->nparams);
  size_t i = (size_t)h & s->table_mask;
  uint64_t t = h & 0xffffffff00000000ull;
  size_t bytes = (size_t)s->nparams * sizeof *cfg;
  *tag = t;
  for (;;) {
    uint64_t v = s->table[i];
    if (v == 0) return i;
    if ((v & 0xffffffff00000000ull) == t &&
        memcmp(s->cfgs + (size_t)((v & 0xffffffffu) - 1) * (size_t)s->nparams, cfg, bytes) == 0)
      return i;
    i = (i + 1) & s->table_mask;
  }
}

rt_status space_finish(space *s, rt_error *err) {
  if (s->finished) return RT_OK;
  if (s->nparams == 0) return rt_error_set(err, RT_ERR_INVALID, "space has no parameters");
  size_t size = 16;
  while (size < 2 * s->n) size *= 2;
  free(s->table);
  s->table = calloc(size, sizeof *s->table);
  if (!s->table) return rt_error_set(err, RT_ERR_NOMEM, "out of memory indexing the space");
  s->table_mask = size - 1;
  for (size_t k = 0; k < s->n; k++) {
    const uint16_t *cfg = s->cfgs + k * (size_t)s->nparams;
    uint64_t tag;
    size_t slot = space_slot(s, cfg, &tag);
    if (s->table[slot]) {
      size_t first = (size_t)(s->table[slot] & 0xffffffffu) - 1;
      free(s->table);
      s->table = NULL;
      return rt_error_set(err, RT_ERR_INVALID,
                          "configuration %zu repeats configuration %zu; each may appear once", k,
                          first);
    }
    s->table[slot] = tag | (uint64_t)(k + 1);
  }
  s->finished = 1;
  return RT_OK;
}

int space_nparams(const space *s) { return s->nparams; }

const space_param *space_param_at(const space *s, int i) {
  if (i < 0 || i >= s->nparams) return NULL;
  return &s->params[i];
}

int space_param_index(const space *s, const char *name) {
  for (int i = 0; i < s->nparams; i++)
    if (strcmp(s->params[i].name, name) == 0) return i;
  return -1;
}

size_t space_size(const space *s) { return s->n; }

double space_product(const space *s) {
  double p = 1;
  for (int i = 0; i < s->nparams; i++) p *= s->params[i].count;
  return p;
}

const uint16_t *space_config(const space *s, size_t idx) {
  if (idx >= s->n) return NULL;
  return s->cfgs + idx * (size_t)s->nparams;
}

long space_index(const space *s, const uint16_t *cfg) {
  if (!s->finished || !cfg) return -1;
  for (int i = 0; i < s->nparams; i++)
    if (cfg[i] >= s->params[i].count) return -1;
  uint64_t tag;
  uint64_t v = s->table[space_slot(s, cfg, &tag)];
  return v ? (long)(v & 0xffffffffu) - 1 : -1;
}

size_t space_neighbours(const space *s, size_t idx, size_t *out, size_t cap) {
  if (idx >= s->n || !s->finished) return 0;
  uint16_t buf[64];
  uint16_t *cfg = s->nparams <= 64 ? buf : malloc((size_t)s->nparams * sizeof *cfg);
  if (!cfg) return 0;
  memcpy(cfg, space_config(s, idx), (size_t)s->nparams * sizeof *cfg);
  size_t found = 0;
  for (int p = 0; p < s->nparams; p++) {
    uint16_t orig = cfg[p];
    for (int dir = -1; dir <= 1; dir += 2) {
      if ((dir < 0 && orig == 0) || (dir > 0 && orig + 1 >= s->params[p].count)) continue;
      cfg[p] = (uint16_t)(orig + dir);
      long k = space_index(s, cfg);
      if (k >= 0) {
        if (found < cap) out[found] = (size_t)k;
        found++;
      }
    }
    cfg[p] = orig;
  }
  if (cfg != buf) free(cfg);
  return found;
}

long space_move(const space *s, const uint16_t *cfg, int p, int dir, int nth) {
  if (!s || p < 0 || p >= s->nparams || !dir || nth < 1) return -1;
  const space_param *pp = &s->params[p];
  uint16_t *c = malloc((size_t)s->nparams * sizeof *c);
  if (!c) return -1;
  memcpy(c, cfg, (size_t)s->nparams * sizeof *c);
  int cur = cfg[p];
  long found = -1;
  /* the candidate positions in the order of their distance from the current value that way:
   * by value for numbers (a domain need not be written in order), by position for identifiers */
  int last = -1; /* the position taken last (its value is the floor for the next) */
  for (int seen = 0;;) {
    int best = -1;
    for (int k = 0; k < pp->count; k++) {
      if (k == cur) continue;
      long long v = pp->ints ? pp->ints[k] : k, vc = pp->ints ? pp->ints[cur] : cur;
      long long vl = last < 0 ? vc : pp->ints ? pp->ints[last] : last;
      if (dir > 0 ? !(v > vl) : !(v < vl)) continue;
      long long vb = best < 0 ? 0 : pp->ints ? pp->ints[best] : best;
      if (best < 0 || (dir > 0 ? v < vb : v > vb)) best = k;
    }
    if (best < 0) break; /* the domain ends that way */
    last = best;
    c[p] = (uint16_t)best;
    long j = space_index(s, c);
    if (j >= 0 && ++seen == nth) {
      found = j;
      break;
    }
  }
  free(c);
  return found;
}

int space_values_to_config(const space *s, int (*lookup)(void *ctx, const char *name, long long *v),
                           void *ctx, uint16_t *cfg) {
  for (int i = 0; i < s->nparams; i++) {
    const space_param *pp = &s->params[i];
    long long v;
    if (!lookup(ctx, pp->name, &v)) return 0;
    int pos = -1;
    if (pp->ints) {
      for (int k = 0; k < pp->count && pos < 0; k++)
        if (pp->ints[k] == v) pos = k;
    } else if (v >= 0 && v < pp->count) {
      pos = (int)v;
    }
    if (pos < 0) return 0;
    cfg[i] = (uint16_t)pos;
  }
  return 1;
}

long long space_value(const space *s, size_t idx, int p) {
  const space_param *pp = &s->params[p];
  uint16_t v = s->cfgs[idx * (size_t)s->nparams + (size_t)p];
  return pp->ints ? pp->ints[v] : (long long)v;
}

size_t space_format_values(const space *s, const uint16_t *cfg, char *buf, size_t size) {
  size_t n = 0;
  if (size) buf[0] = '\0';
  for (int p = 0; p < s->nparams; p++) {
    const space_param *pp = &s->params[p];
    char val[32];
    const char *text = val;
    if (pp->ints)
      snprintf(val, sizeof val, "%lld", pp->ints[cfg[p]]);
    else
      text = pp->idents[cfg[p]];
    int w = snprintf(n < size ? buf + n : NULL, n < size ? size - n : 0, "%s%s=%s", p ? "," : "",
                     pp->name, text);
    if (w > 0) n += (size_t)w;
  }
  return n;
}

size_t space_format_config(const space *s, size_t idx, char *buf, size_t size) {
  if (idx >= s->n) {
    if (size) buf[0] = '\0';
    return 0;
  }
  return space_format_values(s, space_config(s, idx), buf, size);
}

/* Appends the parameter names ("A, B, C") to buf. */
static void space_names_list(const space *s, char *buf, size_t size) {
  size_t n = 0;
  buf[0] = '\0';
  for (int p = 0; p < s->nparams && n < size; p++) {
    int w = snprintf(buf + n, size - n, "%s%s", p ? ", " : "", s->params[p].name);
    if (w > 0) n += (size_t)w;
  }
}

static void space_domain_list(const space_param *pp, char *buf, size_t size) {
  size_t n = 0;
  buf[0] = '\0';
  for (int j = 0; j < pp->count && n < size; j++) {
    int w = pp->ints ? snprintf(buf + n, size - n, "%s%lld", j ? ", " : "", pp->ints[j])
                     : snprintf(buf + n, size - n, "%s%s", j ? ", " : "", pp->idents[j]);
    if (w > 0) n += (size_t)w;
  }
}

rt_status space_parse_values(const space *s, const char *text, uint16_t *cfg, rt_error *err) {
  int np = s->nparams;
  unsigned char seen_buf[64];
  unsigned char *seen = np <= 64 ? seen_buf : calloc((size_t)np, 1);
  if (!seen) return rt_error_set(err, RT_ERR_NOMEM, "out of memory parsing a configuration");
  memset(seen, 0, (size_t)(np <= 64 ? 64 : np));
  rt_status st = RT_OK;
  char list[512];
  const char *p = text;
  for (;;) {
    while (*p == ' ' || *p == '\t') p++;
    const char *name = p;
    while (*p && *p != '=' && *p != ',' && *p != ' ' && *p != '\t') p++;
    size_t nlen = (size_t)(p - name);
    int col = (int)(name - text) + 1;
    while (*p == ' ' || *p == '\t') p++;
    if (nlen == 0 || *p != '=') {
      rt_error_locate(err, NULL, NULL, 0, (int)(p - text) + 1);
      st = rt_error_set(err, RT_ERR_PARSE,
                        "expected NAME=value in configuration \"%s\" (form: "
                        "BLOCK_M=128,BLOCK_N=64)",
                        text);
      goto done;
    }
    int pi = -1;
    for (int i = 0; i < np; i++)
      if (strlen(s->params[i].name) == nlen && memcmp(s->params[i].name, name, nlen) == 0) pi = i;
    if (pi < 0) {
      space_names_list(s, list, sizeof list);
      rt_error_locate(err, NULL, NULL, 0, col);
      st = rt_error_set(err, RT_ERR_PARSE, "unknown parameter %.*s; parameters are: %s", (int)nlen,
                        name, list);
      goto done;
    }
    if (seen[pi]) {
      rt_error_locate(err, NULL, NULL, 0, col);
      st = rt_error_set(err, RT_ERR_PARSE, "parameter %s given twice", s->params[pi].name);
      goto done;
    }
    seen[pi] = 1;
    p++; /* '=' */
    while (*p == ' ' || *p == '\t') p++;
    const char *val = p;
    while (*p && *p != ',') p++;
    const char *vend = p;
    while (vend > val && (vend[-1] == ' ' || vend[-1] == '\t')) vend--;
    size_t vlen = (size_t)(vend - val);
    int vcol = (int)(val - text) + 1;
    const space_param *pp = &s->params[pi];
    int found = -1;
    if (pp->ints) {
      char num[40];
      if (vlen > 0 && vlen < sizeof num) {
        memcpy(num, val, vlen);
        num[vlen] = '\0';
        char *end;
        errno = 0;
        long long v = strtoll(num, &end, 10);
        if (*end == '\0' && errno == 0)
          for (int j = 0; j < pp->count; j++)
            if (pp->ints[j] == v) found = j;
      }
    } else {
      for (int j = 0; j < pp->count; j++)
        if (strlen(pp->idents[j]) == vlen && memcmp(pp->idents[j], val, vlen) == 0) found = j;
    }
    if (found < 0) {
      space_domain_list(pp, list, sizeof list);
      rt_error_locate(err, NULL, NULL, 0, vcol);
      st = rt_error_set(err, RT_ERR_PARSE, "%s=%.*s is not in its domain; values are: %s", pp->name,
                        (int)vlen, val, list);
      goto done;
    }
    cfg[pi] = (uint16_t)found;
    if (*p == '\0') break;
    p++; /* ',' */
  }
  for (int i = 0; i < np; i++)
    if (!seen[i]) {
      rt_error_locate(err, NULL, NULL, 0, 0);
      st = rt_error_set(err, RT_ERR_PARSE, "configuration \"%s\" lacks parameter %s", text,
                        s->params[i].name);
      goto done;
    }
done:
  if (seen != seen_buf) free(seen);
  return st;
}

rt_status space_parse_config(const space *s, const char *text, size_t *idx, rt_error *err) {
  int np = s->nparams;
  if (np == 0) return rt_error_set(err, RT_ERR_INVALID, "space has no parameters");
  uint16_t buf[64];
  uint16_t *cfg = np <= 64 ? buf : malloc((size_t)np * sizeof *cfg);
  if (!cfg) return rt_error_set(err, RT_ERR_NOMEM, "out of memory parsing a configuration");
  rt_status st = space_parse_values(s, text, cfg, err);
  if (st == RT_OK) {
    long k = space_index(s, cfg);
    if (k < 0) {
      rt_error_locate(err, NULL, NULL, 0, 0);
      st = rt_error_set(
          err, RT_ERR_NOT_FOUND,
          "configuration \"%s\" is not valid in this space (a constraint excludes it)", text);
    } else if (idx) {
      *idx = (size_t)k;
    }
  }
  if (cfg != buf) free(cfg);
  return st;
}

rt_status space_subset(const space *s, int (*keep)(void *ctx, const space *s, size_t idx),
                       void *ctx, space **out, rt_error *err) {
  *out = NULL;
  space *part = space_new();
  if (!part) return rt_error_set(err, RT_ERR_NOMEM, "out of memory");
  rt_status rc = RT_OK;
  for (int p = 0; p < space_nparams(s) && !rc; p++) {
    const space_param *sp = space_param_at(s, p);
    rc = space_add_param(part, sp->name, sp->count, sp->ints, (const char *const *)sp->idents, err);
  }
  for (size_t i = 0; i < space_size(s) && !rc; i++)
    if (keep(ctx, s, i)) rc = space_add_config(part, space_config(s, i), err);
  if (!rc) rc = space_finish(part, err);
  if (rc) {
    space_free(part);
    return rc;
  }
  *out = part;
  return RT_OK;
}

static int keep_one(void *ctx, const space *s, size_t idx) {
  (void)s;
  return idx == *(const size_t *)ctx;
}

rt_status space_single(const space *s, size_t idx, space **out, rt_error *err) {
  *out = NULL;
  if (idx >= space_size(s))
    return rt_error_set(err, RT_ERR_INVALID, "configuration %zu is not in the space", idx);
  return space_subset(s, keep_one, &idx, out, err);
}
