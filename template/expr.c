/* expr.c — tokenizer and recursive-descent parser into a syntax tree, name resolution on the
 * tree (identifier values need their comparison partner), and code generation into a stack
 * program that expr_eval runs.
 */
#include "template/expr.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXPR_STACK_MAX 128 /* deepest evaluation stack a program may need */
#define EXPR_DEPTH_MAX 100 /* deepest nesting the parser accepts */

/* ---------------------------------------------------------------- scopes */

struct expr_scope {
  int count;      /* names declared */
  int cap;        /* allocated entries */
  char **names;   /* slot -> name */
  int *nidents;   /* slot -> identifier domain size, 0 for an integer name */
  char ***idents; /* slot -> identifier domain, NULL for an integer name */
  int open;       /* unknown names become new slots */
};

expr_scope *expr_scope_new(void) { return calloc(1, sizeof(expr_scope)); }

void expr_scope_free(expr_scope *sc) {
  if (!sc) return;
  for (int i = 0; i < sc->count; i++) {
    free(sc->names[i]);
    if (sc->idents[i])
      for (int j = 0; j < sc->nidents[i]; j++) free(sc->idents[i][j]);
    free(sc->idents[i]);
  }
  free(sc->names);
  free(sc->nidents);
  free(sc->idents);
  free(sc);
}

int expr_scope_find(const expr_scope *sc, const char *name) {
  for (int i = 0; i < sc->count; i++)
    if (strcmp(sc->names[i], name) == 0) return i;
  return -1;
}

static int expr_scope_findn(const expr_scope *sc, const char *name, size_t len) {
  for (int i = 0; i < sc->count; i++)
    if (strncmp(sc->names[i], name, len) == 0 && sc->names[i][len] == '\0') return i;
  return -1;
}

int expr_scope_add(expr_scope *sc, const char *name, int nidents, const char *const *idents) {
  if (!sc || !name || expr_scope_find(sc, name) >= 0) return -1;
  if (sc->count == sc->cap) {
    int nc = sc->cap ? 2 * sc->cap : 16;
    char **nn = realloc(sc->names, (size_t)nc * sizeof *nn);
    if (!nn) return -1;
    sc->names = nn;
    int *ni = realloc(sc->nidents, (size_t)nc * sizeof *ni);
    if (!ni) return -1;
    sc->nidents = ni;
    char ***nd = realloc(sc->idents, (size_t)nc * sizeof *nd);
    if (!nd) return -1;
    sc->idents = nd;
    sc->cap = nc;
  }
  int slot = sc->count;
  sc->names[slot] = strdup(name);
  sc->nidents[slot] = 0;
  sc->idents[slot] = NULL;
  if (!sc->names[slot]) return -1;
  if (idents && nidents > 0) {
    sc->idents[slot] = calloc((size_t)nidents, sizeof(char *));
    if (!sc->idents[slot]) {
      free(sc->names[slot]);
      return -1;
    }
    sc->nidents[slot] = nidents;
    for (int j = 0; j < nidents; j++) {
      sc->idents[slot][j] = strdup(idents[j]);
      if (!sc->idents[slot][j]) {
        for (int k = 0; k < j; k++) free(sc->idents[slot][k]);
        free(sc->idents[slot]);
        free(sc->names[slot]);
        return -1;
      }
    }
  }
  sc->count++;
  return slot;
}

int expr_scope_count(const expr_scope *sc) { return sc->count; }

const char *expr_scope_name(const expr_scope *sc, int slot) {
  return slot >= 0 && slot < sc->count ? sc->names[slot] : NULL;
}

void expr_scope_set_open(expr_scope *sc, int open) { sc->open = open; }

void expr_scope_list(const expr_scope *sc, int first, char *buf, size_t size) {
  size_t n = 0;
  if (size) buf[0] = '\0';
  for (int i = first; i < sc->count && n < size; i++) {
    int w = snprintf(buf + n, size - n, "%s%s", i > first ? ", " : "", sc->names[i]);
    if (w > 0) n += (size_t)w;
  }
  if (n >= size && size > 4) strcpy(buf + size - 4, "...");
}

/* ---------------------------------------------------------------- programs */

enum {
  OP_CONST,
  OP_LOAD,
  OP_NEG,
  OP_NOT,
  OP_BOOL,
  OP_ADD,
  OP_SUB,
  OP_MUL,
  OP_DIV,
  OP_MOD,
  OP_EQ,
  OP_NE,
  OP_LT,
  OP_LE,
  OP_GT,
  OP_GE,
  OP_MIN,
  OP_MAX,
  OP_CEIL_DIV,
  OP_ROUND_UP,
  OP_ABS,
  OP_IS_POW2,
  OP_LOG2,
  OP_POW2,
  OP_RCONST, /* real expressions: a double (its bits in arg) */
  OP_SQRT,   /* real expressions */
  OP_JZ,     /* pop; jump to arg when zero */
  OP_JNZ,    /* pop; jump to arg when non-zero */
  OP_JMP     /* jump to arg */
};

typedef struct expr_ins {
  int op;        /* OP_* */
  int col;       /* 1-based column of the operator, for evaluation errors */
  long long arg; /* constant, slot or jump target */
} expr_ins;

struct expr {
  int real;       /* parsed by expr_parse_real: evaluated by expr_eval_real */
  char *text;     /* the source text */
  expr_ins *code; /* the program */
  int ncode;      /* its length */
  int *slots;     /* distinct slots read, ascending */
  int nslots;     /* how many */
};

/* ---------------------------------------------------------------- syntax tree */

enum { N_NUM, N_NAME, N_UNARY, N_BINARY, N_COND, N_CALL };

typedef struct expr_node {
  int kind;      /* N_* */
  int op;        /* OP_* for unary, binary and calls */
  int col;       /* 1-based column */
  int a, b, c;   /* children (node indices); calls: first argument index into args, count */
  long long val; /* N_NUM: value; N_NAME after resolution: slot (op OP_LOAD) or constant */
  int name_off;  /* N_NAME: offset of the name in the text */
  int name_len;  /* N_NAME: its length */
  int height;    /* levels of the subtree: 1 for a leaf */
} expr_node;

typedef struct expr_parser {
  const char *text;  /* the expression */
  const char *p;     /* the cursor */
  expr_node *nodes;  /* the tree */
  int nnodes, cap;   /* used / allocated */
  int *args;         /* call arguments (node indices) */
  int nargs, argcap; /* used / allocated */
  int depth;         /* current nesting */
  expr_scope *sc;    /* names */
  rt_error *err;     /* where errors go */
  rt_status st;      /* first error */
  int real;          /* a real expression (expr_parse_real) */
} expr_parser;

static const struct {
  const char *name; /* as written */
  int op;           /* OP_* */
  int min_args;     /* fewest arguments */
  int max_args;     /* most arguments (INT_MAX: any) */
} expr_funcs[] = {
    {"min", OP_MIN, 2, INT_MAX},     {"max", OP_MAX, 2, INT_MAX}, {"ceil_div", OP_CEIL_DIV, 2, 2},
    {"round_up", OP_ROUND_UP, 2, 2}, {"abs", OP_ABS, 1, 1},       {"is_pow2", OP_IS_POW2, 1, 1},
    {"log2", OP_LOG2, 1, 1},         {"pow2", OP_POW2, 1, 1},     {"sqrt", OP_SQRT, 1, 1},
};

/* 1 when op is for integers only (refused in a real expression), 2 for reals only. */
static int expr_op_domain(int op) {
  switch (op) {
    case OP_MOD:
    case OP_CEIL_DIV:
    case OP_ROUND_UP:
    case OP_IS_POW2:
    case OP_LOG2:
    case OP_POW2: return 1;
    case OP_SQRT:
    case OP_RCONST: return 2;
    default: return 0;
  }
}
#define EXPR_NFUNCS ((int)(sizeof expr_funcs / sizeof expr_funcs[0]))

static int expr_fail(expr_parser *ps, int col, rt_status code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int expr_fail(expr_parser *ps, int col, rt_status code, const char *fmt, ...) {
  if (ps->st) return -1;
  ps->st = code;
  if (ps->err) {
    va_list ap;
    va_start(ap, fmt);
    char buf[sizeof ps->err->text];
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    rt_error_set(ps->err, code, "%s", buf);
    ps->err->column = col;
  }
  return -1;
}

static int expr_col(const expr_parser *ps, const char *at) { return (int)(at - ps->text) + 1; }

static int expr_node_new(expr_parser *ps, int kind, int op, int col) {
  if (ps->nnodes == ps->cap) {
    int nc = ps->cap ? 2 * ps->cap : 32;
    expr_node *nn = realloc(ps->nodes, (size_t)nc * sizeof *nn);
    if (!nn) return expr_fail(ps, col, RT_ERR_NOMEM, "out of memory parsing an expression");
    ps->nodes = nn;
    ps->cap = nc;
  }
  expr_node *n = &ps->nodes[ps->nnodes];
  memset(n, 0, sizeof *n);
  n->kind = kind;
  n->op = op;
  n->col = col;
  n->a = n->b = n->c = -1;
  n->height = 1;
  return ps->nnodes++;
}

/* Sets node n's height from its children; an error past EXPR_HEIGHT_MAX (a long chain of
 * operators is as deep as its length, and resolution and code generation recurse over it). */
static int expr_node_height(expr_parser *ps, int n) {
  if (n < 0) return -1;
  expr_node *x = &ps->nodes[n];
  int h = 0;
  if (x->kind == N_CALL) {
    for (int i = 0; i < x->b; i++)
      if (ps->nodes[ps->args[x->a + i]].height > h) h = ps->nodes[ps->args[x->a + i]].height;
  } else {
    int kids[3] = {x->a, x->b, x->c};
    for (int i = 0; i < 3; i++)
      if (kids[i] >= 0 && ps->nodes[kids[i]].height > h) h = ps->nodes[kids[i]].height;
  }
  x->height = h + 1;
  if (x->height > EXPR_HEIGHT_MAX)
    return expr_fail(ps, x->col, RT_ERR_EXPR,
                     "expression nested too deeply (more than %d levels of operators and calls); "
                     "split it into derived values",
                     EXPR_HEIGHT_MAX);
  return n;
}

static void expr_skip(expr_parser *ps) {
  while (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r') ps->p++;
}

static int expr_is_ident_start(char c) { return isalpha((unsigned char)c) || c == '_'; }
static int expr_is_ident_char(char c) { return isalnum((unsigned char)c) || c == '_'; }

static int expr_parse_cond(expr_parser *ps);

static int expr_parse_primary(expr_parser *ps) {
  expr_skip(ps);
  const char *start = ps->p;
  int col = expr_col(ps, start);
  char c = *ps->p;
  if (isdigit((unsigned char)c) || (c == '.' && isdigit((unsigned char)ps->p[1]))) {
    errno = 0;
    char *end;
    int base = start[0] == '0' && (start[1] == 'x' || start[1] == 'X') ? 16 : 10;
    if (base == 10) { /* a decimal with a fraction or an exponent: a real */
      char *rend;
      double r = strtod(start, &rend);
      if (rend > start && memchr(start, '.', (size_t)(rend - start)) == NULL &&
          !memchr(start, 'e', (size_t)(rend - start)) &&
          !memchr(start, 'E', (size_t)(rend - start)))
        rend = NULL; /* an integer */
      if (rend) {
        if (!ps->real)
          return expr_fail(ps, col, RT_ERR_EXPR,
                           "%.*s is not an integer: expressions here are 64-bit integers "
                           "(floating-point values are for a float scalar's value)",
                           (int)(rend - start), start);
        if (expr_is_ident_char(*rend) || *rend == '.')
          return expr_fail(ps, col, RT_ERR_EXPR, "bad number \"%.*s\"",
                           (int)strcspn(start, " \t()+-*/%<>=!&|,?:"), start);
        if (!isfinite(r))
          return expr_fail(ps, col, RT_ERR_EXPR, "number %.*s is too large (a double)",
                           (int)(rend - start), start);
        ps->p = rend;
        int n = expr_node_new(ps, N_NUM, OP_RCONST, col);
        if (n >= 0) memcpy(&ps->nodes[n].val, &r, sizeof r);
        return n;
      }
    }
    unsigned long long v = strtoull(start, &end, base);
    if (expr_is_ident_char(*end))
      return expr_fail(ps, col, RT_ERR_EXPR, "bad number \"%.*s\"",
                       (int)strcspn(start, " \t()+-*/%<>=!&|,?:"), start);
    if (errno || v > (unsigned long long)LLONG_MAX)
      return expr_fail(ps, col, RT_ERR_EXPR, "number %.*s is too large (64-bit integers)",
                       (int)(end - start), start);
    ps->p = end;
    int n = expr_node_new(ps, N_NUM, OP_CONST, col);
    if (n >= 0) ps->nodes[n].val = (long long)v;
    return n;
  }
  if (expr_is_ident_start(c)) {
    while (expr_is_ident_char(*ps->p) || (*ps->p == '.' && expr_is_ident_start(ps->p[1]))) ps->p++;
    int len = (int)(ps->p - start);
    expr_skip(ps);
    if (*ps->p == '(') { /* a function call */
      int f = -1;
      for (int i = 0; i < EXPR_NFUNCS; i++)
        if ((int)strlen(expr_funcs[i].name) == len &&
            strncmp(expr_funcs[i].name, start, (size_t)len) == 0)
          f = i;
      if (f >= 0 && expr_op_domain(expr_funcs[f].op) == (ps->real ? 1 : 2))
        return expr_fail(ps, col, RT_ERR_EXPR,
                         ps->real ? "%s takes integers: not in a float scalar's value"
                                  : "%s is for a float scalar's value, not an integer expression",
                         expr_funcs[f].name);
      if (f < 0) {
        char list[256] = "";
        size_t k = 0;
        for (int i = 0; i < EXPR_NFUNCS; i++) /* those of this kind of expression */
          if (expr_op_domain(expr_funcs[i].op) != (ps->real ? 1 : 2))
            k += (size_t)snprintf(list + k, sizeof list - k, "%s%s", k ? ", " : "",
                                  expr_funcs[i].name);
        return expr_fail(ps, col, RT_ERR_EXPR, "unknown function %.*s; functions are: %s", len,
                         start, list);
      }
      ps->p++;
      /* collect arguments on a local list, then copy them contiguously */
      int local[64], nl = 0;
      expr_skip(ps);
      if (*ps->p != ')') {
        for (;;) {
          int a = expr_parse_cond(ps);
          if (a < 0) return -1;
          if (nl == 64)
            return expr_fail(ps, col, RT_ERR_EXPR, "too many arguments to %s", expr_funcs[f].name);
          local[nl++] = a;
          expr_skip(ps);
          if (*ps->p == ',') {
            ps->p++;
            continue;
          }
          if (*ps->p == ')') break;
          return expr_fail(ps, expr_col(ps, ps->p), RT_ERR_EXPR,
                           "expected ',' or ')' in the arguments of %s", expr_funcs[f].name);
        }
      }
      ps->p++; /* ')' */
      if (nl < expr_funcs[f].min_args || nl > expr_funcs[f].max_args) {
        if (expr_funcs[f].min_args == expr_funcs[f].max_args)
          return expr_fail(ps, col, RT_ERR_EXPR, "%s takes %d argument%s, got %d",
                           expr_funcs[f].name, expr_funcs[f].min_args,
                           expr_funcs[f].min_args == 1 ? "" : "s", nl);
        return expr_fail(ps, col, RT_ERR_EXPR, "%s takes at least %d arguments, got %d",
                         expr_funcs[f].name, expr_funcs[f].min_args, nl);
      }
      if (ps->nargs + nl > ps->argcap) {
        int nc = ps->argcap ? ps->argcap : 16;
        while (nc < ps->nargs + nl) nc *= 2;
        int *na = realloc(ps->args, (size_t)nc * sizeof *na);
        if (!na) return expr_fail(ps, col, RT_ERR_NOMEM, "out of memory parsing an expression");
        ps->args = na;
        ps->argcap = nc;
      }
      int n = expr_node_new(ps, N_CALL, expr_funcs[f].op, col);
      if (n < 0) return -1;
      ps->nodes[n].a = ps->nargs;
      ps->nodes[n].b = nl;
      memcpy(ps->args + ps->nargs, local, (size_t)nl * sizeof *local);
      ps->nargs += nl;
      return expr_node_height(ps, n);
    }
    int n = expr_node_new(ps, N_NAME, OP_LOAD, col);
    if (n >= 0) {
      ps->nodes[n].name_off = (int)(start - ps->text);
      ps->nodes[n].name_len = len;
    }
    return n;
  }
  if (c == '(') {
    ps->p++;
    int n = expr_parse_cond(ps);
    if (n < 0) return -1;
    expr_skip(ps);
    if (*ps->p != ')')
      return expr_fail(ps, expr_col(ps, ps->p), RT_ERR_EXPR,
                       "expected ')' to close the '(' at column %d", col);
    ps->p++;
    return n;
  }
  if (c == '\0')
    return expr_fail(ps, col, RT_ERR_EXPR, "expected a value at the end of the expression");
  return expr_fail(ps, col, RT_ERR_EXPR, "expected a value, found '%c'", c);
}

static int expr_parse_unary(expr_parser *ps) {
  expr_skip(ps);
  char c = *ps->p;
  if (c == '-' || c == '+' || (c == '!' && ps->p[1] != '=')) {
    int col = expr_col(ps, ps->p);
    ps->p++;
    if (++ps->depth > EXPR_DEPTH_MAX)
      return expr_fail(ps, col, RT_ERR_EXPR, "expression nested too deeply");
    int a = expr_parse_unary(ps);
    ps->depth--;
    if (a < 0) return -1;
    if (c == '+') return a;
    int n = expr_node_new(ps, N_UNARY, c == '-' ? OP_NEG : OP_NOT, col);
    if (n >= 0) ps->nodes[n].a = a;
    return expr_node_height(ps, n);
  }
  return expr_parse_primary(ps);
}

/* Binary operators by precedence level (higher binds tighter). */
static int expr_binop(const char *p, int *op, int *len) {
  *len = 2;
  if (p[0] == '|' && p[1] == '|') return *op = -2, 1; /* handled as logic */
  if (p[0] == '&' && p[1] == '&') return *op = -1, 2;
  if (p[0] == '=' && p[1] == '=') return *op = OP_EQ, 3;
  if (p[0] == '!' && p[1] == '=') return *op = OP_NE, 3;
  if (p[0] == '<' && p[1] == '=') return *op = OP_LE, 4;
  if (p[0] == '>' && p[1] == '=') return *op = OP_GE, 4;
  *len = 1;
  switch (p[0]) {
    case '<': return *op = OP_LT, 4;
    case '>': return *op = OP_GT, 4;
    case '+': return *op = OP_ADD, 5;
    case '-': return *op = OP_SUB, 5;
    case '*': return *op = OP_MUL, 6;
    case '/': return *op = OP_DIV, 6;
    case '%': return *op = OP_MOD, 6;
    default: return 0;
  }
}

static int expr_parse_binary(expr_parser *ps, int min_prec) {
  int lhs = expr_parse_unary(ps);
  if (lhs < 0) return -1;
  for (;;) {
    expr_skip(ps);
    int op, len;
    int prec = expr_binop(ps->p, &op, &len);
    if (prec == 0 || prec < min_prec) return lhs;
    int col = expr_col(ps, ps->p);
    if (op == OP_MOD && ps->real)
      return expr_fail(ps, col, RT_ERR_EXPR, "%% takes integers: not in a float scalar's value");
    ps->p += len;
    if (++ps->depth > EXPR_DEPTH_MAX)
      return expr_fail(ps, col, RT_ERR_EXPR, "expression nested too deeply");
    int rhs = expr_parse_binary(ps, prec + 1);
    ps->depth--;
    if (rhs < 0) return -1;
    int n = expr_node_new(ps, N_BINARY, op, col);
    if (n < 0) return -1;
    ps->nodes[n].a = lhs;
    ps->nodes[n].b = rhs;
    if ((lhs = expr_node_height(ps, n)) < 0) return -1;
  }
}

static int expr_parse_cond(expr_parser *ps) {
  if (++ps->depth > EXPR_DEPTH_MAX)
    return expr_fail(ps, expr_col(ps, ps->p), RT_ERR_EXPR, "expression nested too deeply");
  int c = expr_parse_binary(ps, 1);
  if (c < 0) return -1;
  expr_skip(ps);
  if (*ps->p == '?') {
    int col = expr_col(ps, ps->p);
    ps->p++;
    int a = expr_parse_cond(ps);
    if (a < 0) return -1;
    expr_skip(ps);
    if (*ps->p != ':')
      return expr_fail(ps, expr_col(ps, ps->p), RT_ERR_EXPR,
                       "expected ':' for the '?' at column %d", col);
    ps->p++;
    int b = expr_parse_cond(ps);
    if (b < 0) return -1;
    int n = expr_node_new(ps, N_COND, 0, col);
    if (n < 0) return -1;
    ps->nodes[n].a = c;
    ps->nodes[n].b = a;
    ps->nodes[n].c = b;
    if ((c = expr_node_height(ps, n)) < 0) return -1;
  }
  ps->depth--;
  return c;
}

/* ---------------------------------------------------------------- name resolution */

static int expr_ident_pos(const expr_scope *sc, int slot, const char *name, int len) {
  for (int j = 0; j < sc->nidents[slot]; j++)
    if ((int)strlen(sc->idents[slot][j]) == len &&
        strncmp(sc->idents[slot][j], name, (size_t)len) == 0)
      return j;
  return -1;
}

/* The identifier-domain slot a name node resolves to by name, else -1. */
static int expr_ident_slot(expr_parser *ps, int node) {
  if (node < 0 || ps->nodes[node].kind != N_NAME) return -1;
  int s = expr_scope_findn(ps->sc, ps->text + ps->nodes[node].name_off,
                           (size_t)ps->nodes[node].name_len);
  return s >= 0 && ps->sc->idents[s] ? s : -1;
}

static int expr_resolve(expr_parser *ps, int node, int partner);

static int expr_resolve_name(expr_parser *ps, int node, int partner) {
  expr_node *n = &ps->nodes[node];
  const char *name = ps->text + n->name_off;
  int len = n->name_len;
  expr_scope *sc = ps->sc;
  if (partner >= 0) {
    int pos = expr_ident_pos(sc, partner, name, len);
    if (pos >= 0) {
      n->op = OP_CONST;
      n->val = pos;
      return 0;
    }
  }
  int s = expr_scope_findn(sc, name, (size_t)len);
  if (s >= 0) {
    n->op = OP_LOAD;
    n->val = s;
    return 0;
  }
  /* a bare identifier from the declared domains */
  int pos = -1, holders = 0, clash = 0;
  for (int i = 0; i < sc->count; i++) {
    if (!sc->idents[i]) continue;
    int q = expr_ident_pos(sc, i, name, len);
    if (q < 0) continue;
    if (holders++ && q != pos) clash = 1;
    pos = q;
  }
  if (partner >= 0 && (!sc->open || holders)) { /* not from this domain */
    char list[400];
    size_t k = 0;
    list[0] = '\0';
    for (int j = 0; j < sc->nidents[partner] && k < sizeof list; j++) {
      int w = snprintf(list + k, sizeof list - k, "%s%s", j ? ", " : "", sc->idents[partner][j]);
      if (w > 0) k += (size_t)w;
    }
    return expr_fail(ps, n->col, RT_ERR_EXPR, "%.*s is not a value of %s; values are: %s", len,
                     name, sc->names[partner], list);
  }
  if (clash)
    return expr_fail(ps, n->col, RT_ERR_EXPR,
                     "identifier %.*s is ambiguous (its position differs between parameters); "
                     "compare it with a parameter, as in NAME == %.*s",
                     len, name, len, name);
  if (holders) {
    n->op = OP_CONST;
    n->val = pos;
    return 0;
  }
  if (sc->open) {
    char buf[256];
    if (len >= (int)sizeof buf) return expr_fail(ps, n->col, RT_ERR_EXPR, "name too long");
    memcpy(buf, name, (size_t)len);
    buf[len] = '\0';
    s = expr_scope_add(sc, buf, 0, NULL);
    if (s < 0) return expr_fail(ps, n->col, RT_ERR_NOMEM, "out of memory adding name %s", buf);
    n->op = OP_LOAD;
    n->val = s;
    return 0;
  }
  char list[600];
  expr_scope_list(sc, 0, list, sizeof list);
  return expr_fail(ps, n->col, RT_ERR_EXPR, "unknown name %.*s; names are: %s", len, name,
                   sc->count ? list : "(none)");
}

static int expr_resolve(expr_parser *ps, int node, int partner) {
  expr_node *n = &ps->nodes[node];
  switch (n->kind) {
    case N_NUM: return 0;
    case N_NAME: return expr_resolve_name(ps, node, partner);
    case N_UNARY: return expr_resolve(ps, n->a, -1);
    case N_BINARY: {
      int a = n->a, b = n->b, op = n->op;
      int pa = -1, pb = -1;
      if (op == OP_EQ || op == OP_NE || op == OP_LT || op == OP_LE || op == OP_GT || op == OP_GE) {
        pb = expr_ident_slot(ps, a); /* the left side's domain applies to the right */
        pa = expr_ident_slot(ps, b);
      }
      if (expr_resolve(ps, a, pa) < 0) return -1;
      return expr_resolve(ps, b, pb);
    }
    case N_COND:
      if (expr_resolve(ps, n->a, -1) < 0 || expr_resolve(ps, n->b, -1) < 0) return -1;
      return expr_resolve(ps, n->c, -1);
    case N_CALL:
      for (int i = 0; i < n->b; i++)
        if (expr_resolve(ps, ps->args[n->a + i], -1) < 0) return -1;
      return 0;
  }
  return 0;
}

/* ---------------------------------------------------------------- code generation */

typedef struct expr_gen {
  expr_ins *code; /* program */
  int n, cap;     /* used / allocated */
  int depth, max; /* stack depth now / deepest */
  int oom;        /* allocation failed */
} expr_gen;

static int expr_emit(expr_gen *g, int op, int col, long long arg, int stack_delta) {
  if (g->n == g->cap) {
    int nc = g->cap ? 2 * g->cap : 32;
    expr_ins *nc_ = realloc(g->code, (size_t)nc * sizeof *nc_);
    if (!nc_) {
      g->oom = 1;
      return -1;
    }
    g->code = nc_;
    g->cap = nc;
  }
  g->code[g->n] = (expr_ins){op, col, arg};
  g->depth += stack_delta;
  if (g->depth > g->max) g->max = g->depth;
  return g->n++;
}

static void expr_gen_node(expr_parser *ps, expr_gen *g, int node) {
  const expr_node *n = &ps->nodes[node];
  switch (n->kind) {
    case N_NUM: expr_emit(g, n->op == OP_RCONST ? OP_RCONST : OP_CONST, n->col, n->val, 1); return;
    case N_NAME: expr_emit(g, n->op, n->col, n->val, 1); return;
    case N_UNARY:
      expr_gen_node(ps, g, n->a);
      expr_emit(g, n->op, n->col, 0, 0);
      return;
    case N_BINARY: {
      if (n->op == -1 || n->op == -2) { /* && || */
        expr_gen_node(ps, g, n->a);
        int j1 = expr_emit(g, n->op == -1 ? OP_JZ : OP_JNZ, n->col, 0, -1);
        expr_gen_node(ps, g, n->b);
        expr_emit(g, OP_BOOL, n->col, 0, 0);
        int j2 = expr_emit(g, OP_JMP, n->col, 0, -1); /* one value leaves either path */
        if (j1 >= 0) g->code[j1].arg = g->n;
        expr_emit(g, OP_CONST, n->col, n->op == -1 ? 0 : 1, 1);
        if (j2 >= 0) g->code[j2].arg = g->n;
        return;
      }
      expr_gen_node(ps, g, n->a);
      expr_gen_node(ps, g, n->b);
      expr_emit(g, n->op, n->col, 0, -1);
      return;
    }
    case N_COND: {
      expr_gen_node(ps, g, n->a);
      int j1 = expr_emit(g, OP_JZ, n->col, 0, -1);
      expr_gen_node(ps, g, n->b);
      int j2 = expr_emit(g, OP_JMP, n->col, 0, -1);
      if (j1 >= 0) g->code[j1].arg = g->n;
      expr_gen_node(ps, g, n->c);
      if (j2 >= 0) g->code[j2].arg = g->n;
      return;
    }
    case N_CALL: {
      int nargs = n->b;
      expr_gen_node(ps, g, ps->args[n->a]);
      if (nargs == 1) {
        expr_emit(g, n->op, n->col, 0, 0);
        return;
      }
      for (int i = 1; i < nargs; i++) { /* min/max fold left; the others take exactly two */
        expr_gen_node(ps, g, ps->args[n->a + i]);
        expr_emit(g, n->op, n->col, 0, -1);
      }
      return;
    }
  }
}

static int expr_cmp_int(const void *a, const void *b) {
  int x = *(const int *)a, y = *(const int *)b;
  return (x > y) - (x < y);
}

static rt_status expr_parse_mode(const char *text, expr_scope *sc, int real, expr **out,
                                 rt_error *err);

rt_status expr_parse(const char *text, expr_scope *sc, expr **out, rt_error *err) {
  return expr_parse_mode(text, sc, 0, out, err);
}

rt_status expr_parse_real(const char *text, expr_scope *sc, expr **out, rt_error *err) {
  return expr_parse_mode(text, sc, 1, out, err);
}

static rt_status expr_parse_mode(const char *text, expr_scope *sc, int real, expr **out,
                                 rt_error *err) {
  *out = NULL;
  if (!text) return rt_error_set(err, RT_ERR_EXPR, "expression missing");
  size_t len = strlen(text);
  if (len > EXPR_TEXT_MAX) {
    rt_error_set(err, RT_ERR_EXPR,
                 "expression too long (%zu characters, at most %d); split it into "
                 "derived values",
                 len, EXPR_TEXT_MAX);
    if (err) err->column = EXPR_TEXT_MAX + 1;
    return RT_ERR_EXPR;
  }
  expr_parser ps = {.text = text, .p = text, .sc = sc, .err = err, .real = real};
  int root = expr_parse_cond(&ps);
  if (root >= 0) {
    expr_skip(&ps);
    if (*ps.p) {
      if (*ps.p == '=' && ps.p[1] != '=')
        expr_fail(&ps, expr_col(&ps, ps.p), RT_ERR_EXPR,
                  "'=' is not an operator; compare with '=='");
      else
        expr_fail(&ps, expr_col(&ps, ps.p), RT_ERR_EXPR, "unexpected '%c' after the expression",
                  *ps.p);
    }
  }
  if (!ps.st) expr_resolve(&ps, root, -1);
  expr_gen g = {0};
  if (!ps.st) {
    expr_gen_node(&ps, &g, root);
    if (g.oom)
      expr_fail(&ps, 1, RT_ERR_NOMEM, "out of memory compiling an expression");
    else if (g.max > EXPR_STACK_MAX)
      expr_fail(&ps, 1, RT_ERR_EXPR, "expression too complex");
  }
  expr *e = NULL;
  if (!ps.st) {
    e = calloc(1, sizeof *e);
    if (e) e->text = strdup(text), e->real = real;
    if (e) e->slots = malloc((size_t)(g.n ? g.n : 1) * sizeof *e->slots);
    if (!e || !e->text || !e->slots) {
      expr_fail(&ps, 1, RT_ERR_NOMEM, "out of memory compiling an expression");
    } else {
      e->code = g.code;
      e->ncode = g.n;
      g.code = NULL;
      for (int i = 0; i < e->ncode; i++)
        if (e->code[i].op == OP_LOAD) e->slots[e->nslots++] = (int)e->code[i].arg;
      qsort(e->slots, (size_t)e->nslots, sizeof *e->slots, expr_cmp_int);
      int k = 0;
      for (int i = 0; i < e->nslots; i++)
        if (k == 0 || e->slots[k - 1] != e->slots[i]) e->slots[k++] = e->slots[i];
      e->nslots = k;
    }
  }
  free(g.code);
  free(ps.nodes);
  free(ps.args);
  if (ps.st) {
    expr_free(e);
    return ps.st;
  }
  *out = e;
  return RT_OK;
}

void expr_free(expr *e) {
  if (!e) return;
  free(e->text);
  free(e->code);
  free(e->slots);
  free(e);
}

const int *expr_slots(const expr *e, int *count) {
  *count = e->nslots;
  return e->slots;
}

const char *expr_text(const expr *e) { return e->text; }

int expr_constant(const expr *e, long long *value) {
  if (e->nslots || e->real) return 0;
  return expr_eval(e, NULL, value, NULL) == RT_OK;
}

/* ---------------------------------------------------------------- evaluation */

static rt_status expr_eval_fail(const expr_ins *in, rt_error *err, const char *what) {
  if (!err) return RT_ERR_EXPR;
  rt_error_set(err, RT_ERR_EXPR, "%s", what);
  err->column = in->col;
  return RT_ERR_EXPR;
}

/* The comparisons and min/max, the same for integer and real evaluation. */
#define COMPARE_CASES(a, b, r)           \
  case OP_EQ: r = a == b; break;         \
  case OP_NE: r = a != b; break;         \
  case OP_LT: r = a < b; break;          \
  case OP_LE: r = a <= b; break;         \
  case OP_GT: r = a > b; break;          \
  case OP_GE: r = a >= b; break;         \
  case OP_MIN: r = a < b ? a : b; break; \
  case OP_MAX: r = a > b ? a : b; break;

rt_status expr_eval(const expr *e, const long long *slots, long long *out, rt_error *err) {
  if (e->real)
    return rt_error_set(err, RT_ERR_EXPR, "a real expression evaluated as an integer one");
  long long st[EXPR_STACK_MAX];
  int sp = 0;
  const expr_ins *code = e->code;
  int n = e->ncode;
  for (int pc = 0; pc < n; pc++) {
    const expr_ins *in = &code[pc];
    long long a, b, r;
    switch (in->op) {
      case OP_CONST: st[sp++] = in->arg; break;
      case OP_LOAD: st[sp++] = slots[in->arg]; break;
      case OP_NEG:
        if (st[sp - 1] == LLONG_MIN) return expr_eval_fail(in, err, "integer overflow in negation");
        st[sp - 1] = -st[sp - 1];
        break;
      case OP_NOT: st[sp - 1] = !st[sp - 1]; break;
      case OP_BOOL: st[sp - 1] = st[sp - 1] != 0; break;
      case OP_JZ:
        if (!st[--sp]) pc = (int)in->arg - 1;
        break;
      case OP_JNZ:
        if (st[--sp]) pc = (int)in->arg - 1;
        break;
      case OP_JMP: pc = (int)in->arg - 1; break;
      case OP_ABS:
        if (st[sp - 1] == LLONG_MIN) return expr_eval_fail(in, err, "integer overflow in abs");
        if (st[sp - 1] < 0) st[sp - 1] = -st[sp - 1];
        break;
      case OP_IS_POW2:
        a = st[sp - 1];
        st[sp - 1] = a > 0 && (a & (a - 1)) == 0;
        break;
      case OP_LOG2:
        a = st[sp - 1];
        if (a <= 0) return expr_eval_fail(in, err, "log2 of a value that is not positive");
        r = 0;
        while (a >>= 1) r++;
        st[sp - 1] = r;
        break;
      case OP_POW2:
        a = st[sp - 1];
        if (a < 0 || a > 62) return expr_eval_fail(in, err, "pow2 needs an exponent from 0 to 62");
        st[sp - 1] = 1LL << a;
        break;
      default:
        b = st[--sp];
        a = st[sp - 1];
        switch (in->op) {
          case OP_ADD:
            if (__builtin_add_overflow(a, b, &r))
              return expr_eval_fail(in, err, "integer overflow in addition");
            break;
          case OP_SUB:
            if (__builtin_sub_overflow(a, b, &r))
              return expr_eval_fail(in, err, "integer overflow in subtraction");
            break;
          case OP_MUL:
            if (__builtin_mul_overflow(a, b, &r))
              return expr_eval_fail(in, err, "integer overflow in multiplication");
            break;
          case OP_DIV:
          case OP_MOD:
          case OP_CEIL_DIV:
          case OP_ROUND_UP:
            if (b == 0)
              return expr_eval_fail(in, err,
                                    in->op == OP_MOD ? "remainder by zero" : "division by zero");
            if (a == LLONG_MIN && b == -1)
              return expr_eval_fail(in, err, "integer overflow in division");
            if (in->op == OP_MOD) {
              r = a % b;
              break;
            }
            r = a / b;
            if (in->op != OP_DIV && a % b != 0 && ((a % b > 0) == (b > 0))) r++;
            if (in->op == OP_ROUND_UP && __builtin_mul_overflow(r, b, &r))
              return expr_eval_fail(in, err, "integer overflow in round_up");
            break;
            COMPARE_CASES(a, b, r)
          default: return expr_eval_fail(in, err, "internal error: bad instruction");
        }
        st[sp - 1] = r;
    }
  }
  *out = st[0];
  return RT_OK;
}

rt_status expr_eval_real(const expr *e, const long long *slots, double *out, rt_error *err) {
  double st[EXPR_STACK_MAX];
  int sp = 0;
  for (int pc = 0; pc < e->ncode; pc++) {
    const expr_ins *in = &e->code[pc];
    double a, b, r = 0;
    switch (in->op) {
      case OP_CONST: st[sp++] = (double)in->arg; break;
      case OP_RCONST: memcpy(&st[sp++], &in->arg, sizeof(double)); break;
      case OP_LOAD: st[sp++] = (double)slots[in->arg]; break;
      case OP_NEG: st[sp - 1] = -st[sp - 1]; break;
      case OP_NOT: st[sp - 1] = st[sp - 1] == 0; break;
      case OP_BOOL: st[sp - 1] = st[sp - 1] != 0; break;
      case OP_JZ:
        if (st[--sp] == 0) pc = (int)in->arg - 1;
        break;
      case OP_JNZ:
        if (st[--sp] != 0) pc = (int)in->arg - 1;
        break;
      case OP_JMP: pc = (int)in->arg - 1; break;
      case OP_ABS: st[sp - 1] = fabs(st[sp - 1]); break;
      case OP_SQRT:
        if (st[sp - 1] < 0) return expr_eval_fail(in, err, "sqrt of a negative value");
        st[sp - 1] = sqrt(st[sp - 1]);
        break;
      default:
        b = st[--sp];
        a = st[sp - 1];
        switch (in->op) {
          case OP_ADD: r = a + b; break;
          case OP_SUB: r = a - b; break;
          case OP_MUL: r = a * b; break;
          case OP_DIV:
            if (b == 0) return expr_eval_fail(in, err, "division by zero");
            r = a / b;
            break;
            COMPARE_CASES(a, b, r)
          default:
            return expr_eval_fail(in, err,
                                  "internal error: an integer instruction in a real expression");
        }
        if (!isfinite(r))
          return expr_eval_fail(in, err, "overflow: the value is not a finite number");
        st[sp - 1] = r;
    }
  }
  *out = st[0];
  return RT_OK;
}

rt_status expr_eval_text(const char *text, int n, const char *const *names, const long long *values,
                         long long *out, rt_error *err) {
  expr_scope *sc = expr_scope_new();
  if (!sc) return rt_error_set(err, RT_ERR_NOMEM, "out of memory");
  for (int i = 0; i < n; i++)
    if (expr_scope_add(sc, names[i], 0, NULL) < 0) {
      expr_scope_free(sc);
      return rt_error_set(err, RT_ERR_INVALID, "name %s declared twice", names[i]);
    }
  expr *e;
  rt_status s = expr_parse(text, sc, &e, err);
  if (s == RT_OK) {
    s = expr_eval(e, values, out, err);
    expr_free(e);
  }
  expr_scope_free(sc);
  return s;
}
