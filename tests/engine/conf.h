/*
 * conf.h - the harness of the engine conformance suite (conformance.c,
 * conformance_events.c): the table of engines every test runs over, the
 * ENGINE_TEST macro, and opening an engine or skipping with the reason.
 * Header-only (static functions), for the suite's files alone.
 */
#ifndef CONF_H
#define CONF_H

#include <criterion/criterion.h>
#include <criterion/parameterized.h>

#include "gk_checks.h"
#include "tutil.h"

/* ------------------------------------------------------------------------
 * The engines under test: one line each.
 * ---------------------------------------------------------------------- */

#define CAP_STORES 0x1 /* keeps what it is given (all but null) */
#define CAP_EXACT 0x2  /* never drops a key while under budget/max_items */
#define CAP_MAYBE 0x4  /* may legitimately be unavailable here (skip on failure) */
#define CAP_SIM                                                                                    \
    0x8 /* not in the registry: the gpu engine's kernels on host                                   \
         * threads (tests/kernels' hostsim store) */

typedef struct eng_param {
    char name[16];
    unsigned caps;
    unsigned shards; /* > 1: that many stores behind the engine (engine_shards.c) */
} eng_param;

static const eng_param conf_engines[] = {
    {"cpu", CAP_STORES, 1},
    {"gpu", CAP_STORES | CAP_MAYBE, 1},
    {"hostsim", CAP_STORES | CAP_SIM, 1},
    {"auto", CAP_STORES, 1},
    {"lru", CAP_STORES | CAP_EXACT, 1},
    {"fifo", CAP_STORES | CAP_EXACT, 1},
    {"lfu", CAP_STORES | CAP_EXACT, 1},
    {"sieve", CAP_STORES | CAP_EXACT, 1},
    {"s3fifo", CAP_STORES | CAP_EXACT, 1},
    {"null", 0, 1},
    /* sharded: keys split over four stores by hash slot (engine_shards.c) */
    {"cpu", CAP_STORES, 4},
};

#define N_ENGINES (sizeof(conf_engines) / sizeof(conf_engines[0]))

static inline void free_params(struct criterion_test_params *crp)
{
    cr_free(crp->params);
}

static inline struct criterion_test_params engine_params(void)
{
    eng_param *a = cr_malloc(sizeof(conf_engines));
    memcpy(a, conf_engines, sizeof(conf_engines));
    return cr_make_param_array(eng_param, a, N_ENGINES, free_params);
}

/* One test over every engine. */
#define ENGINE_TEST(name)                                                                          \
    ParameterizedTestParameters(conf, name)                                                        \
    {                                                                                              \
        return engine_params();                                                                    \
    }                                                                                              \
    ParameterizedTest(const eng_param *p, conf, name)

static inline bool name_known(const char *name)
{
    for (const char *const *n = engine_names(); *n != NULL; n++) {
        if (strcmp(*n, name) == 0) {
            return true;
        }
    }
    return false;
}

static inline void conf_default(engine_config *cfg)
{
    engine_config_default(cfg);
    cfg->memory_bytes = 16ull << 20;
}

/* Create the engine or skip the test with the reason. */
static inline engine *open_cfg(const eng_param *p, const engine_config *cfg_in)
{
    char why[512] = "";
    engine_config c = *cfg_in;
    c.shards = p->shards;
    const engine_config *cfg = &c;
    engine *e = (p->caps & CAP_SIM)
                    ? engine_create_store(&gk_hostsim_store_ops, cfg, NULL, why, sizeof(why))
                    : engine_create(p->name, cfg, why, sizeof(why));
    if (e == NULL) {
        if ((p->caps & CAP_MAYBE) || (!(p->caps & CAP_SIM) && !name_known(p->name))) {
            cr_skip_test("engine %s unavailable here: %s", p->name, why);
        }
        cr_assert_fail("engine_create(%s) failed: %s", p->name, why);
    }
    cr_assert_str_neq(why, "", "engine_create(%s) must say what it chose", p->name);
    return e;
}

static inline engine *open_default(const eng_param *p)
{
    engine_config cfg;
    conf_default(&cfg);
    return open_cfg(p, &cfg);
}

#define T_NEED_STORE(p)                                                                            \
    do {                                                                                           \
        if (!((p)->caps & CAP_STORES)) {                                                           \
            cr_skip_test("%s stores nothing", (p)->name);                                          \
        }                                                                                          \
    } while (0)

static inline cudis_stats stats_of(engine *e)
{
    cudis_stats s;
    engine_stats(e, &s);
    return s;
}

#endif /* CONF_H */
