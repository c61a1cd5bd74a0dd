/*
 * load_keys.h - random numbers, key choice (uniform or Zipf) and value-size
 * distributions for cudis-bench.
 *
 * The Zipf sampler is Hoermann and Derflinger's rejection-inversion method
 * ("Rejection-inversion to generate variates from monotone discrete
 * distributions", 1996): exact for any exponent s > 0, O(1) set-up and O(1)
 * expected time per draw, so key ranges of billions cost nothing to set up.
 * Rank r (1 = most popular) is mapped to a key id by a fixed bijection of
 * [0, n) so that popularity is not correlated with load order.
 * All state is per caller (one generator per thread); nothing is shared.
 */
#ifndef LOAD_KEYS_H
#define LOAD_KEYS_H

#include <stdbool.h>
#include <stdint.h>

/* xoshiro256** generator. */
struct load_rng {
    uint64_t s[4];
};

/* Seeds the generator (any seed, 0 included). */
void load_rng_seed(struct load_rng *r, uint64_t seed);

/* Next 64 random bits. */
uint64_t load_rng_next(struct load_rng *r);

/* Uniform double in [0, 1). */
double load_rng_double(struct load_rng *r);

/* Uniform integer in [0, n) (n > 0). */
uint64_t load_rng_below(struct load_rng *r, uint64_t n);

/* Key chooser over ids [0, n). */
struct load_keygen {
    uint64_t n;
    double s;       /* Zipf exponent; 0 = uniform */
    bool scramble;  /* map ranks through the bijection (default true) */
    uint64_t mult;  /* bijection: id = (rank-1) * mult % n */
    /* rejection-inversion constants */
    double h_int_x1, h_int_n, thresh;
};

/* Prepares a chooser of n keys (n >= 1); s = 0 gives uniform keys, s > 0 a
 * Zipf distribution with P(rank k) proportional to k^-s. Returns 0 or
 * CUDIS_E_INVAL. */
int load_keygen_init(struct load_keygen *g, uint64_t n, double s);

/* Draws a rank in [1, n] (1 = most popular). */
uint64_t load_keygen_rank(const struct load_keygen *g, struct load_rng *r);

/* Maps a rank to its key id in [0, n) (a bijection). */
uint64_t load_keygen_id_of_rank(const struct load_keygen *g, uint64_t rank);

/* Draws a key id in [0, n). */
uint64_t load_keygen_next(const struct load_keygen *g, struct load_rng *r);

/* Exact probability of rank k under the chooser (for tests and reports);
 * O(n) the first time for s > 0 (it sums the normaliser). */
double load_keygen_prob(const struct load_keygen *g, uint64_t k);

#define LOAD_VSIZE_MAX_CHOICES 16

/* Value-size distribution: fixed, uniform in [min, max], or weighted
 * choices. */
struct load_vsize {
    int kind; /* 0 fixed, 1 uniform, 2 weighted */
    uint32_t min, max;
    unsigned nchoices;
    uint32_t sizes[LOAD_VSIZE_MAX_CHOICES];
    double cum[LOAD_VSIZE_MAX_CHOICES]; /* cumulative weights, last = 1 */
};

/* Parses "32" (fixed), "16-1024" (uniform) or "32:5,512:3,4096:2" (weighted
 * choices). Returns 0 or CUDIS_E_INVAL. */
int load_vsize_parse(struct load_vsize *v, const char *spec);

/* Draws a size. */
uint32_t load_vsize_next(const struct load_vsize *v, struct load_rng *r);

/* Mean size (exact). */
double load_vsize_mean(const struct load_vsize *v);

#endif /* LOAD_KEYS_H */
