/* model.c — the model strategy: the configurations in the order of a predicted time (a model
 * device ranks them), fastest first. */
#include <stdlib.h>

#include "search/strategy_internal.h"

typedef struct {
  size_t *order; /* configurations by predicted time, fastest first */
  size_t pos;    /* next entry */
} strategy_model;

static rt_status strategy_model_init(strategy *st, rt_error *err) {
  if (!st->opt.predict)
    return rt_error_set(err, RT_ERR_INVALID,
                        "the model strategy needs a predicted time for "
                        "each configuration (a model device)");
  strategy_model *m = calloc(1, sizeof *m);
  st->impl = m;
  if (!m) return rt_error_set(err, RT_ERR_NOMEM, "out of memory");
  return strategy_rank_predicted(st->sp, st->opt.predict, st->opt.predict_ctx, &m->order, err);
}

static long strategy_model_next(strategy *st) {
  strategy_model *m = st->impl;
  while (m->pos < st->n && st->state[m->order[m->pos]] != ST_UNSEEN) m->pos++;
  return m->pos < st->n ? (long)m->order[m->pos++] : -1;
}

static void strategy_model_free(strategy *st) {
  strategy_model *m = st->impl;
  if (m) free(m->order);
  free(m);
}

const strategy_kind strategy_kind_model = {
    "model",
    STRATEGY_BATCH | STRATEGY_KEEPS_ORDER | STRATEGY_PREDICTED,
    strategy_model_init,
    strategy_model_next,
    NULL,
    strategy_model_free};
