/*
 * butil.h - what the baselines' tests share: an engine with a capacity in
 * items, and SET / GET / EXISTS of a text key (EXISTS without TOUCH, so it
 * changes no policy state).
 */
#ifndef TESTS_BASELINES_BUTIL_H
#define TESTS_BASELINES_BUTIL_H

#include <criterion/criterion.h>

#include "../engine/tutil.h"

static inline engine *open_items(const char *name, uint64_t max_items)
{
    engine_config cfg;
    engine_config_default(&cfg);
    cfg.max_items = max_items;
    char why[256];
    engine *e = engine_create(name, &cfg, why, sizeof(why));
    cr_assert_not_null(e, "%s", why);
    return e;
}

static inline void set(engine *e, const char *k)
{
    tres r = T_SET(e, k, k);
    cr_assert_eq(r.r.status, CUDIS_OK);
}

static inline bool present(engine *e, const char *k)
{
    tres r = t_op(e, T_NOW, CUDIS_OP_EXISTS, 0, k, NULL, 0, 0);
    return (r.r.flags & CUDIS_R_FOUND) != 0;
}

static inline void get(engine *e, const char *k)
{
    T_GET(e, k);
}

#endif /* TESTS_BASELINES_BUTIL_H */
