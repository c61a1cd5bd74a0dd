/*
 * sim_model.c - reference model of the CCHT replacement policy (two
 * candidate buckets, evict the older bucket tail). See sim_model.h.
 */
#include "sim_model.h"

#include <stdlib.h>
#include <string.h>

bool sim_model_parse(const char *label, uint32_t *ways, bool *ccht_slack, bool *emptier,
                     uint32_t *choices)
{
    if (strncmp(label, "model", 5) != 0) {
        return false;
    }
    char *end;
    unsigned long w = strtoul(label + 5, &end, 10);
    if (end == label + 5 || w == 0 || w > 64) {
        return false;
    }
    *ccht_slack = false;
    *emptier = false;
    *choices = 2;
    for (; *end != '\0'; end++) {
        if (*end == 'c' && end[1] >= '2' && end[1] <= '4') {
            *choices = (uint32_t)(end[1] - '0');
            end++;
        } else if (*end == 's') {
            *ccht_slack = true;
        } else if (*end == 'e') {
            *emptier = true;
        } else {
            return false;
        }
    }
    *ways = (uint32_t)w;
    return true;
}

uint32_t sim_model_ccht_slack(uint64_t slots)
{
    return slots / 256 > 1024 ? 1024 : (uint32_t)(slots / 256);
}

static inline uint64_t fastrange(uint64_t h, uint64_t n)
{
    return (uint64_t)(((unsigned __int128)h * n) >> 64);
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
    uint8_t *used = calloc(nb * W, 1);
    if (keys == NULL || stamps == NULL || used == NULL) {
        free(keys);
        free(stamps);
        free(used);
        return -1;
    }
    int64_t hits = 0;
    uint64_t items = 0;
    for (size_t i = 0; i < t->n; i++) {
        uint64_t clock = i + 1;
        uint64_t key = t->keys[i];
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
                    if (clock - stamps[s] > cfg->slack) {
                        stamps[s] = clock;
                    }
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
            for (int k = 0; k < nbk; k++) {
                for (uint32_t w = 0; w < W; w++) {
                    uint64_t s = b[k] * W + w;
                    if (stamps[s] < oldest) {
                        oldest = stamps[s];
                        slot = (int64_t)s;
                    }
                }
            }
        } else {
            items++;
        }
        used[slot] = 1;
        keys[slot] = key;
        stamps[slot] = clock;
    }
    free(keys);
    free(stamps);
    free(used);
    if (items_out != NULL) {
        *items_out = items;
    }
    return hits;
}
