/* budget.c — one budget over several searches, by their roof bounds (see budget.h). */
#include "search/budget.h"

#include <string.h>

#include "model/roofline.h"

void budget_init(budget_plan *b, int n, const double *bound_s, const double *roof_s, long budget,
                 double slack, double stop) {
  memset(b, 0, sizeof *b);
  b->n = n < 0 ? 0 : n > BUDGET_MAX_ARMS ? BUDGET_MAX_ARMS : n;
  b->left = budget > 0 ? budget : 0;
  b->slack = slack > 0 ? slack : 0;
  b->stop = stop > 0 && stop <= 1 ? stop : 0;
  for (int i = 0; i < b->n; i++) {
    b->arm[i].bound_s = bound_s && bound_s[i] > 0 ? bound_s[i] : 0;
    b->arm[i].roof_s = roof_s && roof_s[i] > 0 ? roof_s[i] : 0;
    b->order[i] = i;
  }
  if (!b->slack && !b->stop) return; /* no rule: the order given */
  /* increasing bound, an unknown one last (nothing rules it out, nothing says it is fast);
   * insertion sort keeps ties in the order given */
  for (int i = 1; i < b->n; i++) {
    int k = b->order[i], j = i;
    double bk = b->arm[k].bound_s;
    while (j > 0) {
      double bj = b->arm[b->order[j - 1]].bound_s;
      if (!(bk > 0) || (bj > 0 && bj <= bk)) break;
      b->order[j] = b->order[j - 1];
      j--;
    }
    b->order[j] = k;
  }
}

/* Whether arm a can still come within the slack of the incumbent. */
static int can_win(const budget_plan *b, const budget_arm *a, double incumbent_s) {
  if (!b->slack || b->unsound || !(a->bound_s > 0)) return 1;
  template_roof r = {.seconds = a->bound_s};
  return roofline_can_win(&r, incumbent_s, b->slack);
}

/* Whether arm a takes part in the current round: every waiting one in the first, then those
 * searched that may take more (and any still waiting). */
static int in_round(const budget_plan *b, const budget_arm *a) {
  if (b->round == 0) return a->state == ARM_WAITING;
  return a->state == ARM_WAITING || a->state == ARM_OPEN;
}

int budget_next(budget_plan *b, double incumbent_s, long *share) {
  *share = 0;
  for (;;) {
    if (b->left <= 0 || b->n == 0) return -1;
    if (b->at >= b->n) { /* a round is over: the next hands out what is left */
      if (b->round > 0 && b->round_spent == 0) return -1;
      b->round++;
      b->at = 0;
      b->round_spent = 0;
      continue;
    }
    int i = b->order[b->at];
    budget_arm *a = &b->arm[i];
    if (!in_round(b, a)) {
      b->at++;
      continue;
    }
    if (!can_win(b, a, incumbent_s)) {
      a->state = ARM_RULED_OUT;
      a->ruled_against_s = incumbent_s;
      b->at++;
      continue;
    }
    long rest = 0; /* the arms of this round from here on, this one included */
    for (int k = b->at; k < b->n; k++) {
      const budget_arm *o = &b->arm[b->order[k]];
      rest += in_round(b, o) && can_win(b, o, incumbent_s);
    }
    *share = b->left / rest;
    if (*share < 1) *share = 1; /* a budget smaller than the arms: the first ones one each */
    b->at++;
    return i;
  }
}

int budget_stops(const budget_plan *b, int i, double best_s) {
  if (i < 0 || i >= b->n || !b->stop || b->unsound) return 0;
  const budget_arm *a = &b->arm[i];
  if (!(a->roof_s > 0) || !(best_s > 0)) return 0;
  if (a->bound_s > 0 && best_s < a->bound_s) return 0; /* the bounds do not hold */
  template_roof r = {.seconds = a->roof_s};
  return roofline_at_roof(&r, best_s, b->stop);
}

void budget_told(budget_plan *b, int i, long spent, double best_s, int spent_out) {
  if (i < 0 || i >= b->n) return;
  budget_arm *a = &b->arm[i];
  if (spent < 0) spent = 0;
  a->spent += spent;
  b->left -= spent;
  b->round_spent += spent;
  if (best_s > 0 && (!(a->best_s > 0) || best_s < a->best_s)) a->best_s = best_s;
  if (!b->unsound && a->bound_s > 0 && a->best_s > 0 && a->best_s < a->bound_s) {
    /* faster than it can be: the ceilings are wrong, and so is every rule built on them */
    b->unsound = 1;
    b->unsound_arm = i;
    for (int k = 0; k < b->n; k++) {
      budget_arm *o = &b->arm[k];
      if (o->state == ARM_RULED_OUT)
        o->state = o->spent ? ARM_OPEN : ARM_WAITING;
      else if (o->state == ARM_AT_ROOF)
        o->state = ARM_OPEN;
    }
  }
  if (spent_out)
    a->state = ARM_SPENT;
  else if (budget_stops(b, i, a->best_s))
    a->state = ARM_AT_ROOF;
  else
    a->state = ARM_OPEN;
}

const char *budget_state_name(budget_arm_state s) {
  switch (s) {
    case ARM_WAITING: return "not searched";
    case ARM_OPEN: return "searched";
    case ARM_RULED_OUT: return "ruled out";
    case ARM_AT_ROOF: return "at its roof";
    case ARM_SPENT: return "space exhausted";
  }
  return "?";
}
