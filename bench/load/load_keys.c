/*
 * load_keys.c - RNG, uniform/Zipf key choice (rejection-inversion) and
 * value-size distributions (see load_keys.h).
 */
#include "load_keys.h"

#include "cudis_err.h"
#include "cudis_rng.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- rng */

void load_rng_seed(struct load_rng *r, uint64_t seed)
{
    cudis_rng_seed(r->s, seed);
}

uint64_t load_rng_next(struct load_rng *r)
{
    return cudis_rng_next(r->s);
}

double load_rng_double(struct load_rng *r)
{
    return cudis_rng_double(r->s);
}

uint64_t load_rng_below(struct load_rng *r, uint64_t n)
{
    /* Lemire's multiply-shift; the bias (< n / 2^64) is irrelevant here */
    return (uint64_t)(((unsigned __int128)load_rng_next(r) * n) >> 64);
}

/* ---------------------------------------------------------------- zipf */

static double helper1(double x) /* log1p(x) / x */
{
    if (fabs(x) > 1e-8) {
        return log1p(x) / x;
    }
    return 1.0 - x * (0.5 - x * (1.0 / 3.0 - 0.25 * x));
}

static double helper2(double x) /* expm1(x) / x */
{
    if (fabs(x) > 1e-8) {
        return expm1(x) / x;
    }
    return 1.0 + x * 0.5 * (1.0 + x * (1.0 / 3.0) * (1.0 + 0.25 * x));
}

static double h_int(double s, double x) /* integral of x^-s (shifted) */
{
    double lx = log(x);
    return helper2((1.0 - s) * lx) * lx;
}

static double h_fn(double s, double x)
{
    return exp(-s * log(x));
}

static double h_int_inv(double s, double x)
{
    double t = x * (1.0 - s);
    if (t < -1.0) {
        t = -1.0;
    }
    return exp(helper1(t) * x);
}

static uint64_t gcd64(uint64_t a, uint64_t b)
{
    while (b) {
        uint64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

int load_keygen_init(struct load_keygen *g, uint64_t n, double s)
{
    if (n < 1 || !(s >= 0.0) || s > 10.0) {
        return CUDIS_E_INVAL;
    }
    memset(g, 0, sizeof(*g));
    g->n = n;
    g->s = s;
    g->scramble = true;
    /* a multiplier coprime with n makes rank -> id a bijection */
    uint64_t m = 0x9e3779b97f4a7c15ull % n;
    if (m == 0) {
        m = 1;
    }
    while (gcd64(m, n) != 1) {
        m++;
    }
    g->mult = m;
    if (s > 0.0) {
        g->h_int_x1 = h_int(s, 1.5) - 1.0;
        g->h_int_n = h_int(s, (double)n + 0.5);
        g->thresh = 2.0 - h_int_inv(s, h_int(s, 2.5) - h_fn(s, 2.0));
    }
    return 0;
}

uint64_t load_keygen_rank(const struct load_keygen *g, struct load_rng *r)
{
    if (g->s == 0.0) {
        return 1 + load_rng_below(r, g->n);
    }
    for (;;) {
        double u = g->h_int_n + load_rng_double(r) * (g->h_int_x1 - g->h_int_n);
        double x = h_int_inv(g->s, u);
        double kd = floor(x + 0.5);
        uint64_t k;
        if (kd < 1.0) {
            k = 1;
        } else if (kd > (double)g->n) {
            k = g->n;
        } else {
            k = (uint64_t)kd;
        }
        if ((double)k - x <= g->thresh || u >= h_int(g->s, (double)k + 0.5) - h_fn(g->s, (double)k)) {
            return k;
        }
    }
}

uint64_t load_keygen_id_of_rank(const struct load_keygen *g, uint64_t rank)
{
    if (!g->scramble) {
        return rank - 1;
    }
    return (uint64_t)(((unsigned __int128)(rank - 1) * g->mult) % g->n);
}

uint64_t load_keygen_next(const struct load_keygen *g, struct load_rng *r)
{
    return load_keygen_id_of_rank(g, load_keygen_rank(g, r));
}

double load_keygen_prob(const struct load_keygen *g, uint64_t k)
{
    if (k < 1 || k > g->n) {
        return 0.0;
    }
    if (g->s == 0.0) {
        return 1.0 / (double)g->n;
    }
    double z = 0.0;
    for (uint64_t i = g->n; i >= 1; i--) { /* small terms first */
        z += pow((double)i, -g->s);
    }
    return pow((double)k, -g->s) / z;
}

/* ---------------------------------------------------------- value sizes */

static int parse_u32(const char *s, char **end, uint32_t *out)
{
    char *e;
    unsigned long v = strtoul(s, &e, 10);
    if (e == s || v > 512ul * 1024 * 1024) {
        return CUDIS_E_INVAL;
    }
    *out = (uint32_t)v;
    *end = e;
    return 0;
}

int load_vsize_parse(struct load_vsize *v, const char *spec)
{
    memset(v, 0, sizeof(*v));
    char *e;
    uint32_t a;
    if (!spec || parse_u32(spec, &e, &a) != 0) {
        return CUDIS_E_INVAL;
    }
    if (*e == '\0') {
        v->kind = 0;
        v->min = v->max = a;
        return 0;
    }
    if (*e == '-') {
        uint32_t b;
        if (parse_u32(e + 1, &e, &b) != 0 || *e != '\0' || b < a) {
            return CUDIS_E_INVAL;
        }
        v->kind = 1;
        v->min = a;
        v->max = b;
        return 0;
    }
    /* weighted list size:weight,... */
    v->kind = 2;
    const char *p = spec;
    double total = 0.0;
    v->min = UINT32_MAX;
    while (*p) {
        uint32_t sz;
        if (v->nchoices == LOAD_VSIZE_MAX_CHOICES || parse_u32(p, &e, &sz) != 0 || *e != ':') {
            return CUDIS_E_INVAL;
        }
        char *e2;
        double w = strtod(e + 1, &e2);
        if (e2 == e + 1 || !(w > 0.0)) {
            return CUDIS_E_INVAL;
        }
        total += w;
        v->sizes[v->nchoices] = sz;
        v->cum[v->nchoices] = total;
        v->nchoices++;
        if (sz < v->min) {
            v->min = sz;
        }
        if (sz > v->max) {
            v->max = sz;
        }
        if (*e2 == ',') {
            e2++;
            if (*e2 == '\0') {
                return CUDIS_E_INVAL;
            }
        } else if (*e2 != '\0') {
            return CUDIS_E_INVAL;
        }
        p = e2;
    }
    if (v->nchoices == 0) {
        return CUDIS_E_INVAL;
    }
    for (unsigned i = 0; i < v->nchoices; i++) {
        v->cum[i] /= total;
    }
    v->cum[v->nchoices - 1] = 1.0;
    return 0;
}

uint32_t load_vsize_next(const struct load_vsize *v, struct load_rng *r)
{
    switch (v->kind) {
    case 0:
        return v->min;
    case 1:
        return v->min + (uint32_t)load_rng_below(r, (uint64_t)v->max - v->min + 1);
    default: {
        double u = load_rng_double(r);
        for (unsigned i = 0; i < v->nchoices; i++) {
            if (u < v->cum[i]) {
                return v->sizes[i];
            }
        }
        return v->sizes[v->nchoices - 1];
    }
    }
}

double load_vsize_mean(const struct load_vsize *v)
{
    switch (v->kind) {
    case 0:
        return v->min;
    case 1:
        return ((double)v->min + (double)v->max) / 2.0;
    default: {
        double m = 0.0, prev = 0.0;
        for (unsigned i = 0; i < v->nchoices; i++) {
            m += (v->cum[i] - prev) * v->sizes[i];
            prev = v->cum[i];
        }
        return m;
    }
    }
}
