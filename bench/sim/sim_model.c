/*
 * sim_model.c - reference model of the CCHT replacement policy (two
 * candidate buckets, evict the older bucket tail). See sim_model.h.
 */
#include "sim_model.h"

#include <stdlib.h>
#include <string.h>

bool sim_model_parse(const char *label, sim_model_cfg *cfg, bool *ccht_slack)
{
    if (strncmp(label, "model", 5) != 0) {
        return false;
    }
    char *end;
    unsigned long w = strtoul(label + 5, &end, 10);
    if (end == label + 5 || w == 0 || w > 64) {
        return false;
    }
    bool slack = false, emptier = false, ghost = false, freq = false, adapt = false, local = false,
         admit = false, guard = false;
    uint32_t known_at = 0;
    uint32_t choices = 2, demote = 0;
    for (; *end != '\0'; end++) {
        if (*end == 'c' && end[1] >= '2' && end[1] <= '4') {
            choices = (uint32_t)(end[1] - '0');
            end++;
        } else if (*end == 'q') {
            char *e2;
            unsigned long p = strtoul(end + 1, &e2, 10);
            if (e2 == end + 1 || p == 0 || p > 99) {
                return false;
            }
            demote = (uint32_t)p;
            end = e2 - 1;
        } else if (*end == 's') {
            slack = true;
        } else if (*end == 'e') {
            emptier = true;
        } else if (*end == 'g') {
            ghost = true;
        } else if (*end == 'f') {
            freq = true;
        } else if (*end == 'a') {
            adapt = true;
        } else if (*end == 'l') {
            local = true;
        } else if (*end == 'w' && end[1] == 'v') {
            guard = true;
            end++;
        } else if (*end == 'w' && end[1] == 'k' && end[2] >= '2' && end[2] <= '9') {
            known_at = (uint32_t)(end[2] - '0');
            end += 2;
        } else if (*end == 'w') {
            admit = true;
        } else {
            return false;
        }
    }
    *ccht_slack = slack;
    cfg->ways = (uint32_t)w;
    cfg->emptier = emptier;
    cfg->choices = choices;
    cfg->demote = demote;
    cfg->ghost = ghost;
    cfg->freq = freq;
    cfg->adapt = adapt && ghost && demote != 0;
    cfg->local = local && demote != 0;
    cfg->admit = admit;
    cfg->sketch_guard = guard && local;
    cfg->sketch_known = demote != 0 ? known_at : 0;
    if (guard != cfg->sketch_guard || known_at != cfg->sketch_known) {
        return false;
    }
    return adapt == cfg->adapt && local == cfg->local;
}

uint32_t sim_model_ccht_slack(uint64_t slots)
{
    return slots / 256 > 1024 ? 1024 : (uint32_t)(slots / 256);
}

static inline uint64_t fastrange(uint64_t h, uint64_t n)
{
    return (uint64_t)(((unsigned __int128)h * n) >> 64);
}

/* A ghost tag: 15 bits of hash g and bit 0 set (valid); under adapt, bit 1
 * says the key was evicted after a hit (14 bits of hash then). */
static inline uint16_t ghost_tag(uint64_t g, bool adapt, bool was_hit)
{
    if (!adapt) {
        return (uint16_t)(g >> 48 | 1u);
    }
    return (uint16_t)((g >> 48 & ~3ull) | (was_hit ? 2u : 0u) | 1u);
}

/* TinyLFU's frequency sketch: 4 rows of 4-bit counters (one byte each
 * here), `mask + 1` wide, halved every `sample` increments. */
typedef struct sketch {
    uint8_t *c;
    uint64_t mask, sample, adds;
} sketch;

static uint32_t sketch_get(const sketch *k, uint64_t key, uint64_t seed)
{
    uint64_t h = sim_mix64(key ^ seed ^ 0x2545f4914f6cdd1dull);
    uint32_t m = 15;
    for (int r = 0; r < 4; r++) {
        uint8_t v = k->c[(uint64_t)r * (k->mask + 1) + ((h >> (16 * r)) & k->mask)];
        m = v < m ? v : m;
    }
    return m;
}

static void sketch_add(sketch *k, uint64_t key, uint64_t seed)
{
    uint64_t h = sim_mix64(key ^ seed ^ 0x2545f4914f6cdd1dull);
    uint32_t m = sketch_get(k, key, seed);
    if (m < 15) { /* conservative update: only the rows at the minimum */
        for (int r = 0; r < 4; r++) {
            uint8_t *v = &k->c[(uint64_t)r * (k->mask + 1) + ((h >> (16 * r)) & k->mask)];
            *v += *v == m ? 1 : 0;
        }
    }
    if (++k->adds >= k->sample) {
        for (uint64_t i = 0; i < 4 * (k->mask + 1); i++) {
            k->c[i] >>= 1;
        }
        k->adds /= 2;
    }
}

int64_t sim_model_run(const sim_trace *t, const sim_model_cfg *cfg, uint64_t *items_out)
{
    uint32_t W = cfg->ways;
    uint64_t nb = (cfg->capacity + W - 1) / W;
    if (nb == 0) {
        nb = 1;
    }
    uint64_t *keys = malloc(nb * W * sizeof(uint64_t));
    uint64_t *stamps = malloc(nb * W * sizeof(uint64_t));
    uint8_t *used = calloc(nb * W, 1); /* 1: an item; 2: one not hit since it came */
    uint64_t ng = cfg->ghost ? nb * W : 0;
    uint8_t *cnt = calloc(nb * W, 1); /* freq: hits, at most 3 */
    uint16_t *ghost = ng ? calloc(ng, sizeof(uint16_t)) : NULL;
    sketch sk = {0};
    bool sketched = cfg->admit || cfg->sketch_guard || cfg->sketch_known != 0;
    if (sketched) {
        uint64_t wdt = 16;
        while (wdt < cfg->capacity) {
            wdt <<= 1;
        }
        sk.mask = wdt - 1;
        sk.sample = 10 * cfg->capacity;
        sk.c = calloc(4 * wdt, 1);
    }
    if (keys == NULL || stamps == NULL || used == NULL || cnt == NULL || (ng && ghost == NULL) ||
        (sketched && sk.c == NULL)) {
        free(cnt);
        free(keys);
        free(stamps);
        free(used);
        free(ghost);
        free(sk.c);
        return -1;
    }
    int64_t hits = 0;
    uint64_t items = 0;
    double victim_age = (double)cfg->capacity; /* exponential average, 1/64 per eviction */
    double demote = cfg->demote;               /* adapt: moves within 5..95 */
    for (size_t i = 0; i < t->n; i++) {
        uint64_t clock = i + 1;
        uint64_t key = t->keys[i];
        if (sketched) {
            sketch_add(&sk, key, cfg->seed);
        }
        uint32_t C = cfg->choices >= 2 && cfg->choices <= 4 ? cfg->choices : 2;
        uint64_t b[4];
        uint64_t h = sim_mix64(key ^ cfg->seed);
        int nbk = 0;
        for (uint32_t c = 0; c < C && (uint64_t)nbk < nb; c++) {
            uint64_t x = fastrange(h, nb);
            /* distinct buckets: step past ones already chosen */
            for (int again = 1; again;) {
                again = 0;
                for (int k = 0; k < nbk; k++) {
                    if (b[k] == x) {
                        x = x + 1 == nb ? 0 : x + 1;
                        again = 1;
                    }
                }
            }
            b[nbk++] = x;
            h = sim_mix64(h ^ 0x9e3779b97f4a7c15ull);
        }
        bool hit = false;
        for (int k = 0; k < nbk && !hit; k++) {
            for (uint32_t w = 0; w < W; w++) {
                uint64_t s = b[k] * W + w;
                if (used[s] && keys[s] == key) {
                    if (clock - stamps[s] > cfg->slack || used[s] == 2) {
                        stamps[s] = clock;
                    }
                    if (used[s] == 1 && cnt[s] < 3) {
                        cnt[s]++;
                    }
                    used[s] = 1;
                    hit = true;
                    break;
                }
            }
        }
        if (hit) {
            hits++;
            continue;
        }
        /* insert: a free slot of b1, then b2, else the oldest of both */
        int64_t slot = -1;
        if (cfg->emptier) {
            /* order the candidates by free slots, most first (stable) */
            uint32_t fr[4];
            for (int k = 0; k < nbk; k++) {
                fr[k] = 0;
                for (uint32_t w = 0; w < W; w++) {
                    fr[k] += !used[b[k] * W + w];
                }
            }
            for (int k = 1; k < nbk; k++) {
                for (int j = k; j > 0 && fr[j] > fr[j - 1]; j--) {
                    uint64_t xb = b[j];
                    b[j] = b[j - 1];
                    b[j - 1] = xb;
                    uint32_t xf = fr[j];
                    fr[j] = fr[j - 1];
                    fr[j - 1] = xf;
                }
            }
        }
        for (int k = 0; k < nbk && slot < 0; k++) {
            for (uint32_t w = 0; w < W; w++) {
                if (!used[b[k] * W + w]) {
                    slot = (int64_t)(b[k] * W + w);
                    break;
                }
            }
        }
        if (slot < 0) {
            uint64_t oldest = UINT64_MAX;
            for (;;) {
                oldest = UINT64_MAX;
                for (int k = 0; k < nbk; k++) {
                    for (uint32_t w = 0; w < W; w++) {
                        uint64_t s = b[k] * W + w;
                        if (stamps[s] < oldest) {
                            oldest = stamps[s];
                            slot = (int64_t)s;
                        }
                    }
                }
                if (cfg->local) {
                    /* a new key ranks as if demote% of the pair's oldest age older */
                    uint64_t head = (uint64_t)((double)(clock - oldest) * demote / 100.0), best = 0;
                    uint64_t kb[2] = {0, 0};
                    int64_t ks[2] = {-1, -1}; /* [NEW]: the oldest slot of each kind */
                    for (int k = 0; k < nbk; k++) {
                        for (uint32_t w = 0; w < W; w++) {
                            uint64_t s = b[k] * W + w;
                            uint64_t eff = clock - stamps[s] + (used[s] == 2 ? head : 0);
                            if (eff > best) {
                                best = eff;
                                slot = (int64_t)s;
                            }
                            int kind = used[s] == 2;
                            if (ks[kind] < 0 || eff > kb[kind]) {
                                kb[kind] = eff;
                                ks[kind] = (int64_t)s;
                            }
                        }
                    }
                    if (cfg->sketch_guard && ks[0] >= 0 && ks[1] >= 0 && slot == ks[0] &&
                        sketch_get(&sk, keys[ks[1]], cfg->seed) <=
                            sketch_get(&sk, keys[ks[0]], cfg->seed)) {
                        slot = ks[1]; /* the reused key is asked for more: the NEW one goes */
                        best = kb[1];
                    }
                    oldest = clock - best;
                }
                if (!cfg->freq || cnt[slot] == 0) {
                    break;
                }
                cnt[slot]--; /* CLOCK: a second chance per hit */
                stamps[slot] = clock;
            }
            if (cfg->admit &&
                sketch_get(&sk, key, cfg->seed) <= sketch_get(&sk, keys[slot], cfg->seed)) {
                continue; /* TinyLFU: the victim is asked for more often: stays */
            }
            victim_age += ((double)(clock - oldest) - victim_age) / 64.0;
            if (ng && (used[slot] == 2 || cfg->adapt)) {
                uint64_t g = sim_mix64(keys[slot] ^ cfg->seed ^ 0x5bd1e995ull);
                ghost[fastrange(g, ng)] = ghost_tag(g, cfg->adapt, used[slot] != 2);
            }
        } else {
            items++;
        }
        uint64_t stamp = clock;
        used[slot] = 1;
        cnt[slot] = 0;
        if (cfg->demote != 0) {
            bool known = false;
            if (ng) {
                uint64_t g = sim_mix64(key ^ cfg->seed ^ 0x5bd1e995ull);
                uint64_t gi = fastrange(g, ng);
                uint16_t mask = cfg->adapt ? (uint16_t)~2u : (uint16_t)~0u;
                if ((ghost[gi] & mask) == ghost_tag(g, cfg->adapt, false)) {
                    known = true;
                    if (cfg->adapt) {
                        /* evicted before a hit: demote less; after: more */
                        demote += ghost[gi] & 2u ? 1.0 : -1.0;
                        demote = demote < 5.0 ? 5.0 : demote > 95.0 ? 95.0 : demote;
                    }
                    ghost[gi] = 0;
                }
            }
            if (!known && cfg->sketch_known != 0 &&
                sketch_get(&sk, key, cfg->seed) >= cfg->sketch_known) {
                known = true; /* asked for before, lately: as if its ghost were found */
            }
            if (!known && cfg->local) {
                used[slot] = 2;
            } else if (!known) {
                uint64_t head = (uint64_t)(victim_age * demote / 100.0);
                stamp = clock > head ? clock - head : 0;
                used[slot] = 2;
            }
        }
        keys[slot] = key;
        stamps[slot] = stamp;
    }
    free(keys);
    free(stamps);
    free(used);
    free(ghost);
    free(cnt);
    free(sk.c);
    if (items_out != NULL) {
        *items_out = items;
    }
    return hits;
}
