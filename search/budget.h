/* budget.h — one evaluation budget over several searches of one problem (a family's templates),
 * spent where it can pay.
 *
 * Each search (an arm) may come with two times computed before anything runs
 * (model/roofline.h's template_roof): its bound, a time no configuration of it can beat on
 * ceilings no GPU exceeds (datasheet peaks, no launch), and its roof, the same arithmetic on the
 * run's own ceilings (measured where the run measured them), a time its configurations can come
 * near.  The plan
 *
 *   - searches the arms in increasing bound (an arm without one last: nothing rules it out, and
 *     nothing says it is fast), each for an even share of what is left, as the budget was
 *     shared before;
 *   - rules out an arm whose bound cannot come within `slack` of the run's incumbent (the
 *     fastest result of any arm): it gets no more evaluations (roofline_can_win);
 *   - stops an arm once its best reaches `stop` of its roof (roofline_at_roof): a further
 *     evaluation could gain at most 1/stop - 1;
 *   - hands what is left, round after round, to the arms that can still win and are neither
 *     at their roof nor spent (their strategy has nothing more to ask), until the budget is
 *     spent or no arm can take more.
 * A best faster than its own bound means the ceilings are wrong (a GPU above its datasheet, or
 * a model that predicts below its roofs): from then on nothing is ruled out or stopped, and an
 * arm ruled out before may run again.  Pure bookkeeping: the caller runs each search for the
 * share it is handed and says what it did; tune (tuner/tune_budget.c) and bench_steer's family
 * problems use the same plan. */
#ifndef ROOFTUNE_BUDGET_H
#define ROOFTUNE_BUDGET_H

#define BUDGET_MAX_ARMS 32
#define BUDGET_SLACK    0.05 /* an arm whose bound is over 5 % above the incumbent cannot win */

typedef enum {
  ARM_WAITING = 0, /* not searched yet */
  ARM_OPEN,        /* searched, and may take more */
  ARM_RULED_OUT,   /* its bound cannot come within the slack of the incumbent */
  ARM_AT_ROOF,     /* its best reached the stop share of its roof */
  ARM_SPENT,       /* its strategy has nothing more to ask (the space is exhausted) */
} budget_arm_state;

typedef struct budget_arm {
  double bound_s; /* no configuration runs faster; 0: unknown (never ruled out) */
  double roof_s;  /* the roof it stops near; 0: unknown (never stops) */
  double best_s;  /* its fastest result so far; 0: none */
  long spent;     /* new evaluations made */
  budget_arm_state state;
  double ruled_against_s; /* the incumbent it was ruled out against */
} budget_arm;

typedef struct budget_plan {
  int n; /* arms */
  budget_arm arm[BUDGET_MAX_ARMS];
  int order[BUDGET_MAX_ARMS]; /* the arms by increasing bound, ties in the order given */
  long left;                  /* evaluations left */
  double slack;               /* 0: the across rule is off */
  double stop;                /* 0: the within rule is off */
  int round;                  /* 0: the first pass over the arms; then the rounds of what is left */
  int at;                     /* the next position in order */
  long round_spent;           /* evaluations made in this round (a round of none ends the plan) */
  int unsound;                /* a best beat its bound: both rules off from then on */
  int unsound_arm;            /* the arm whose best did */
} budget_plan;

/* n arms (at most BUDGET_MAX_ARMS; more are left out), bound_s and roof_s per arm (NULL, or 0
 * entries: unknown), budget evaluations, slack and stop (0: that rule off).  With both rules
 * off the arms keep the order given. */
void budget_init(budget_plan *b, int n, const double *bound_s, const double *roof_s, long budget,
                 double slack, double stop);

/* The next arm to search, with *share its new evaluations; -1 when the budget is spent or no
 * arm can take more.  incumbent_s: the run's fastest result so far (0: none).  An arm ruled out
 * on the way is marked so (budget_arm.state, ruled_against_s). */
int budget_next(budget_plan *b, double incumbent_s, long *share);

/* After arm i's search for its share: spent new evaluations, best_s its fastest result so far
 * (0: none), spent_out 1 when its strategy had nothing more to ask. */
void budget_told(budget_plan *b, int i, long spent, double best_s, int spent_out);

/* 1 when arm i, at best_s, has reached the stop share of its roof (and the bounds hold): its
 * search stops now.  What a search asks between its batches. */
int budget_stops(const budget_plan *b, int i, double best_s);

/* The arm's state in words: "searched", "ruled out", "at its roof", "space exhausted", "not
 * searched". */
const char *budget_state_name(budget_arm_state s);

#endif
