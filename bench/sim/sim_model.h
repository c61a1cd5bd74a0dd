/*
 * sim_model.h - a reference model of the CCHT's replacement policy, written
 * independently of cuckoo/ so that the simulator can tell an algorithmic
 * gap to exact LRU from an implementation one (hashing, stamp clock, slack).
 *
 * The model: capacity/ways buckets of `ways` slots; a key may live in two
 * buckets b1 != b2 (ideal 64-bit hash of the id and a seed); a lookup probes
 * both and, on a hit, stamps the slot with the request's clock value (unless
 * the stamp is younger than `slack` ticks, as the CCHT skips such writes);
 * an insert takes a free slot of b1, then b2 (or of the emptier bucket),
 * else evicts the slot with the
 * oldest stamp of the two buckets. The clock ticks once per request; 64-bit
 * stamps (no wrap). Single-threaded, one request at a time.
 *
 * Beyond LRU (what-ifs for the in-bucket policies, `demote` and `ghost`):
 * quick demotion stamps a new key as if it were already `demote`% of the
 * recent victims' age old (an exponential average of the age of evicted
 * slots), so a key nobody asks for again leaves after the rest of that age,
 * while a hit stamps it with the clock as LRU does (S3-FIFO's small queue,
 * at bucket scale). The ghost remembers keys evicted before any hit: a
 * direct-mapped array of 16-bit tags, one per slot; a new key whose tag is
 * there enters with the clock's stamp (S3-FIFO's ghost queue). `freq`
 * counts hits after the first (at most 3): the oldest slot of the pair,
 * when it has some, loses one and is stamped with the clock instead of
 * going (S3-FIFO's main queue, a CLOCK with 2-bit counters).
 *
 * The frequency sketch (W-TinyLFU's idea at bucket scale, three uses):
 * a count-min sketch of every request, 4 rows of 4-bit counters as wide
 * as the capacity (rounded up to a power of two), halved every 10 x
 * capacity requests. `admit`: a new key whose count is not above the
 * victim's is not cached (TinyLFU's filter); `sketch_guard`: the pair's
 * oldest reused key goes only when its count is above its oldest NEW
 * key's; `sketch_known`: a key the sketch has seen often enough lately
 * comes in without NEW (a ghost of longer reach).
 */
#ifndef SIM_MODEL_H
#define SIM_MODEL_H

#include <stdbool.h>
#include <stdint.h>

#include "sim_trace.h"

typedef struct sim_model_cfg {
    uint64_t capacity; /* slots (rounded up to whole buckets) */
    uint32_t ways;     /* slots per bucket */
    uint32_t slack;    /* skip a hit's stamp refresh when younger than this */
    uint64_t seed;     /* hash seed */
    bool emptier;      /* insert into the emptier bucket (else: b1 first, then b2) */
    uint32_t choices;  /* candidate buckets per key (0 = 2; at most 4) */
    uint32_t demote;   /* quick demotion: a new key's head start in % of the victims' age */
    bool ghost;        /* remember keys evicted before a hit (16-bit tags) */
    bool freq;         /* CLOCK in the pair: the oldest slot with hits gets a second chance */
    bool adapt;        /* demote moves: -1 point per ghost hit of a key evicted before a hit,
                        * +1 per one evicted after (the ghost then keeps both) */
    bool local;        /* quick demotion by the pair's own oldest age, at eviction: a key
                        * not hit since it came ranks demote% of that age older (its stamp
                        * stays its arrival; no average of victims' ages) */
    bool admit;        /* TinyLFU: a frequency sketch of every request; a new key whose
                        * count is not above the victim's is not admitted */
    bool sketch_guard; /* with l: when the pair's oldest reused key would go, the oldest
                        * NEW one goes instead unless its count is above the reused one's */
    uint32_t sketch_known; /* with q: a new key counted at least this often by the sketch
                            * (this request included) comes in without NEW, as if its ghost
                            * were found (0: no) */
} sim_model_cfg;

/* Parse a label "modelW[s][e][cN][qP][l][g][f][a][w|wv|wkN]" into cfg's ways, emptier,
 * choices, demote, local, ghost, freq, adapt and the sketch's use (the rest of cfg
 * is left alone): W ways; s =
 * the CCHT's stamp slack rule (slots/256, at most 1024; else 0: *ccht_slack
 * says which); e = a free slot goes into the emptier of the two buckets
 * (else b1 first); cN = N candidate buckets (2..4, a what-if: the CCHT has
 * 2); qP = quick demotion by P% (1..99); l = by the pair's own age (needs
 * q); g = the ghost; f = the counters; a = P adapts (needs q and g; with l
 * the pair's head start moves); w = TinyLFU's admission filter; wv = the
 * sketch guards reused keys (needs l); wkN = a key counted N times (2..9)
 * comes in without NEW (needs q). Returns true for a model label. */
bool sim_model_parse(const char *label, sim_model_cfg *cfg, bool *ccht_slack);

/* The slack the CCHT uses for a table of `slots` slots. */
uint32_t sim_model_ccht_slack(uint64_t slots);

/* Replay t; returns hits (of t->n requests), or -1 on allocation failure.
 * *items_out (optional) gets the live items at the end. */
int64_t sim_model_run(const sim_trace *t, const sim_model_cfg *cfg, uint64_t *items_out);

#endif /* SIM_MODEL_H */
