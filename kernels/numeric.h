/* numeric.h — the number formats the families store and the seeded values they fill inputs
 * with: f32 to f16 and bf16 with round-to-nearest-even (NaN kept, overflow to infinity for
 * f16), back to f32 exactly, and a splitmix64 generator, so the same seed gives the same inputs
 * on every machine. */
#ifndef ROOFTUNE_NUMERIC_H
#define ROOFTUNE_NUMERIC_H

#include <stdint.h>

uint16_t num_f32_to_f16(float f);
uint16_t num_f32_to_bf16(float f);
float num_f16_to_f32(uint16_t h);
float num_bf16_to_f32(uint16_t h);

/* The next value of a splitmix64 stream with state *s. */
uint64_t num_rng(uint64_t *s);
/* A uniform double in [lo, hi) from the stream (53 random bits). */
double num_uniform(uint64_t *s, double lo, double hi);

#endif
