/*
 * sim_trace.c - trace readers, synthetic generators, key sets and the
 * capacity rule for the hit-ratio simulator. See sim_trace.h.
 */
#include "sim_trace.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cudis_err.h"
#include "cudis_rng.h"

static int fail(char *why, size_t why_len, int code, const char *fmt, ...)
{
    if (why != NULL && why_len > 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(why, why_len, fmt, ap);
        va_end(ap);
    }
    return code;
}

static void set_name(sim_trace *t, const char *source)
{
    snprintf(t->source, sizeof(t->source), "%s", source);
    const char *base = strrchr(source, '/');
    base = base != NULL ? base + 1 : source;
    snprintf(t->name, sizeof(t->name), "%s", base);
    static const char *const exts[] = {".oracleGeneral.bin", ".oracleGeneral", ".bin", ".keys",
                                       ".txt"};
    for (size_t i = 0; i < sizeof(exts) / sizeof(exts[0]); i++) {
        size_t nl = strlen(t->name), el = strlen(exts[i]);
        if (nl > el && strcmp(t->name + nl - el, exts[i]) == 0) {
            t->name[nl - el] = '\0';
            break;
        }
    }
}

/* Whole file into a malloc'd buffer (plus a NUL). */
static int slurp(const char *path, char **buf, size_t *len, char *why, size_t why_len)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        return fail(why, why_len, CUDIS_E_IO, "%s: %s", path, strerror(errno));
    }
    struct stat st;
    if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) {
        fclose(f);
        return fail(why, why_len, CUDIS_E_IO, "%s: not a regular file", path);
    }
    size_t n = (size_t)st.st_size;
    char *b = malloc(n + 1);
    if (b == NULL) {
        fclose(f);
        return fail(why, why_len, CUDIS_E_NOMEM, "%s: out of memory (%zu bytes)", path, n);
    }
    size_t got = n > 0 ? fread(b, 1, n, f) : 0;
    int err = ferror(f);
    fclose(f);
    if (got != n || err) {
        free(b);
        return fail(why, why_len, CUDIS_E_IO, "%s: short read", path);
    }
    b[n] = '\0';
    *buf = b;
    *len = n;
    return CUDIS_OK;
}

/* ------------------------------------------------------------------------
 * Readers
 * ---------------------------------------------------------------------- */

static uint64_t line_id(const char *s, size_t len)
{
    uint64_t v = 0;
    bool numeric = len > 0 && len <= 20;
    for (size_t i = 0; numeric && i < len; i++) {
        unsigned d = (unsigned char)s[i] - '0';
        if (d > 9 || v > (UINT64_MAX - d) / 10) {
            numeric = false;
        } else {
            v = v * 10 + d;
        }
    }
    if (numeric) {
        return v;
    }
    uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a */
    for (size_t i = 0; i < len; i++) {
        h ^= (unsigned char)s[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

int sim_trace_read_keys(const char *path, sim_trace *t, char *why, size_t why_len)
{
    memset(t, 0, sizeof(*t));
    char *buf;
    size_t len;
    int rc = slurp(path, &buf, &len, why, why_len);
    if (rc != CUDIS_OK) {
        return rc;
    }
    size_t lines = 1;
    for (size_t i = 0; i < len; i++) {
        lines += buf[i] == '\n';
    }
    t->keys = malloc(lines * sizeof(uint64_t));
    if (t->keys == NULL) {
        free(buf);
        return fail(why, why_len, CUDIS_E_NOMEM, "%s: out of memory", path);
    }
    size_t n = 0;
    char *p = buf, *end = buf + len;
    while (p < end) {
        char *nl = memchr(p, '\n', (size_t)(end - p));
        char *le = nl != NULL ? nl : end;
        size_t ll = (size_t)(le - p);
        if (ll > 0 && p[ll - 1] == '\r') {
            ll--;
        }
        if (ll > 0) {
            t->keys[n++] = line_id(p, ll);
        }
        p = le + 1;
    }
    free(buf);
    t->n = n;
    set_name(t, path);
    rc = sim_trace_finish(t);
    if (rc != CUDIS_OK) {
        sim_trace_free(t);
        return fail(why, why_len, rc, "%s: out of memory", path);
    }
    return CUDIS_OK;
}

static uint32_t le32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t le64(const unsigned char *p)
{
    return (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32;
}

int sim_trace_read_oracle(const char *path, sim_trace *t, char *why, size_t why_len)
{
    memset(t, 0, sizeof(*t));
    char *buf;
    size_t len;
    int rc = slurp(path, &buf, &len, why, why_len);
    if (rc != CUDIS_OK) {
        return rc;
    }
    if (len % 24 != 0) {
        free(buf);
        return fail(why, why_len, CUDIS_E_PROTO,
                    "%s: %zu bytes is not a whole number of 24-byte oracleGeneral records "
                    "(compressed .zst files must be decompressed first)",
                    path, len);
    }
    size_t n = len / 24;
    t->keys = malloc((n > 0 ? n : 1) * sizeof(uint64_t));
    t->sizes = malloc((n > 0 ? n : 1) * sizeof(uint32_t));
    if (t->keys == NULL || t->sizes == NULL) {
        free(buf);
        sim_trace_free(t);
        return fail(why, why_len, CUDIS_E_NOMEM, "%s: out of memory", path);
    }
    const unsigned char *r = (const unsigned char *)buf;
    for (size_t i = 0; i < n; i++, r += 24) {
        /* r+0: uint32 time; r+16: int64 next_access_vtime (unused: we replay, not oracle) */
        t->keys[i] = le64(r + 4);
        t->sizes[i] = le32(r + 12);
    }
    free(buf);
    t->n = n;
    set_name(t, path);
    rc = sim_trace_finish(t);
    if (rc != CUDIS_OK) {
        sim_trace_free(t);
        return fail(why, why_len, rc, "%s: out of memory", path);
    }
    return CUDIS_OK;
}

static bool is_oracle_name(const char *path)
{
    size_t l = strlen(path);
    return strstr(path, ".oracleGeneral") != NULL || (l > 4 && strcmp(path + l - 4, ".bin") == 0);
}

static bool is_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

int sim_trace_load(const char *spec, const char *trace_dir, sim_trace *t, char *why, size_t why_len)
{
    static const char *const gens[] = {"zipf", "uniform", "scanzipf", "latest"};
    for (size_t i = 0; i < sizeof(gens) / sizeof(gens[0]); i++) {
        size_t gl = strlen(gens[i]);
        if (strncmp(spec, gens[i], gl) == 0 && (spec[gl] == ':' || spec[gl] == '\0')) {
            sim_gen_cfg g;
            int rc = sim_gen_parse(spec, &g, why, why_len);
            if (rc != CUDIS_OK) {
                return rc;
            }
            return sim_trace_generate(&g, t, why, why_len);
        }
    }
    char path[1024];
    const char *found = NULL;
    if (is_file(spec)) {
        found = spec;
    } else if (trace_dir != NULL && strchr(spec, '/') == NULL) {
        static const char *const sfx[] = {"", ".keys", ".oracleGeneral.bin", ".bin"};
        for (size_t i = 0; i < sizeof(sfx) / sizeof(sfx[0]) && found == NULL; i++) {
            snprintf(path, sizeof(path), "%s/%s%s", trace_dir, spec, sfx[i]);
            if (is_file(path)) {
                found = path;
            }
        }
    }
    if (found == NULL) {
        memset(t, 0, sizeof(*t));
        return fail(why, why_len, CUDIS_E_IO,
                    "trace '%s': no such file, no such name in %s, and not a generator "
                    "(zipf:, uniform:, scanzipf:, latest:)",
                    spec, trace_dir != NULL ? trace_dir : "(no trace dir)");
    }
    return is_oracle_name(found) ? sim_trace_read_oracle(found, t, why, why_len)
                                 : sim_trace_read_keys(found, t, why, why_len);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int sim_trace_list(const char *dir, char ***out)
{
    *out = NULL;
    DIR *d = opendir(dir);
    if (d == NULL) {
        return CUDIS_E_IO;
    }
    char **names = NULL;
    int n = 0, cap = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        size_t l = strlen(de->d_name);
        bool keys = l > 5 && strcmp(de->d_name + l - 5, ".keys") == 0;
        bool bin = l > 4 && strcmp(de->d_name + l - 4, ".bin") == 0;
        if (!keys && !bin) {
            continue;
        }
        if (n == cap) {
            cap = cap ? cap * 2 : 8;
            char **nn = realloc(names, (size_t)cap * sizeof(char *));
            if (nn == NULL) {
                break;
            }
            names = nn;
        }
        names[n] = strdup(de->d_name);
        if (names[n] != NULL) {
            n++;
        }
    }
    closedir(d);
    if (n > 0) {
        qsort(names, (size_t)n, sizeof(char *), cmp_str);
    }
    *out = names;
    return n;
}

void sim_trace_free(sim_trace *t)
{
    free(t->keys);
    free(t->sizes);
    t->keys = NULL;
    t->sizes = NULL;
    t->n = 0;
}

int sim_trace_finish(sim_trace *t)
{
    sim_kset s;
    if (sim_kset_init(&s, t->n > 0 ? t->n : 1) != CUDIS_OK) {
        return CUDIS_E_NOMEM;
    }
    t->unique = 0;
    t->unique_bytes = 0;
    t->max_size = 0;
    for (size_t i = 0; i < t->n; i++) {
        if (sim_kset_add(&s, t->keys[i])) {
            t->unique++;
            if (t->sizes != NULL) {
                t->unique_bytes += t->sizes[i];
            }
        }
        if (t->sizes != NULL && t->sizes[i] > t->max_size) {
            t->max_size = t->sizes[i];
        }
    }
    sim_kset_deinit(&s);
    return CUDIS_OK;
}

/* ------------------------------------------------------------------------
 * Random numbers and the Zipf law
 * ---------------------------------------------------------------------- */

void sim_rng_seed(sim_rng *r, uint64_t seed)
{
    cudis_rng_seed(r->s, seed);
}

uint64_t sim_rng_next(sim_rng *r)
{
    return cudis_rng_next(r->s);
}

double sim_rng_double(sim_rng *r)
{
    return cudis_rng_double(r->s);
}

int sim_zipf_init(sim_zipf *z, uint64_t n, double s)
{
    memset(z, 0, sizeof(*z));
    if (n == 0 || n >= UINT32_MAX || s < 0) {
        return CUDIS_E_INVAL;
    }
    z->n = n;
    z->prob = malloc(n * sizeof(double));
    z->alias = malloc(n * sizeof(uint32_t));
    uint32_t *small = malloc(n * sizeof(uint32_t));
    uint32_t *large = malloc(n * sizeof(uint32_t));
    if (z->prob == NULL || z->alias == NULL || small == NULL || large == NULL) {
        free(small);
        free(large);
        sim_zipf_deinit(z);
        return CUDIS_E_NOMEM;
    }
    /* Sum from the smallest terms up for accuracy. */
    double h = 0;
    for (uint64_t i = n; i-- > 0;) {
        z->prob[i] = pow((double)(i + 1), -s);
        h += z->prob[i];
    }
    uint64_t ns = 0, nl = 0;
    for (uint64_t i = 0; i < n; i++) {
        z->prob[i] = z->prob[i] * (double)n / h;
        z->alias[i] = (uint32_t)i;
        if (z->prob[i] < 1.0) {
            small[ns++] = (uint32_t)i;
        } else {
            large[nl++] = (uint32_t)i;
        }
    }
    while (ns > 0 && nl > 0) {
        uint32_t l = small[--ns], g = large[nl - 1];
        z->alias[l] = g;
        z->prob[g] = (z->prob[g] + z->prob[l]) - 1.0;
        if (z->prob[g] < 1.0) {
            nl--;
            small[ns++] = g;
        }
    }
    while (nl > 0) {
        z->prob[large[--nl]] = 1.0;
    }
    while (ns > 0) { /* rounding leftovers */
        z->prob[small[--ns]] = 1.0;
    }
    free(small);
    free(large);
    return CUDIS_OK;
}

void sim_zipf_deinit(sim_zipf *z)
{
    free(z->prob);
    free(z->alias);
    z->prob = NULL;
    z->alias = NULL;
    z->n = 0;
}

uint64_t sim_zipf_draw(const sim_zipf *z, double u1, double u2)
{
    uint64_t i = (uint64_t)(u1 * (double)z->n);
    if (i >= z->n) {
        i = z->n - 1;
    }
    return u2 < z->prob[i] ? i : z->alias[i];
}

/* ------------------------------------------------------------------------
 * Generators
 * ---------------------------------------------------------------------- */

void sim_gen_default(sim_gen_cfg *g, int kind)
{
    memset(g, 0, sizeof(*g));
    g->kind = kind;
    g->exponent = 0.99;
    g->keys = 100000;
    g->requests = 1000000;
    g->scan_frac = 0.1;
    g->scan_len = 1000;
    g->scan_keys = 0; /* 10 * keys */
    g->insert_frac = 0.05;
    g->seed = 1;
}

static int parse_num(const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || errno != 0) {
        return CUDIS_E_INVAL;
    }
    if (*end == 'k' || *end == 'K') {
        v *= 1e3;
        end++;
    } else if (*end == 'm' || *end == 'M') {
        v *= 1e6;
        end++;
    } else if (*end == 'g' || *end == 'G') {
        v *= 1e9;
        end++;
    }
    if (*end != '\0' || !(v >= 0)) {
        return CUDIS_E_INVAL;
    }
    *out = v;
    return CUDIS_OK;
}

int sim_gen_parse(const char *spec, sim_gen_cfg *g, char *why, size_t why_len)
{
    static const struct {
        const char *name;
        int kind;
    } kinds[] = {{"zipf", SIM_GEN_ZIPF},
                 {"uniform", SIM_GEN_UNIFORM},
                 {"scanzipf", SIM_GEN_SCANZIPF},
                 {"latest", SIM_GEN_LATEST}};
    const char *colon = strchr(spec, ':');
    size_t kl = colon != NULL ? (size_t)(colon - spec) : strlen(spec);
    int kind = 0;
    for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
        if (strlen(kinds[i].name) == kl && strncmp(spec, kinds[i].name, kl) == 0) {
            kind = kinds[i].kind;
        }
    }
    if (kind == 0) {
        return fail(why, why_len, CUDIS_E_INVAL, "unknown generator in '%s'", spec);
    }
    sim_gen_default(g, kind);
    if (colon == NULL) {
        return CUDIS_OK;
    }
    char buf[512];
    snprintf(buf, sizeof(buf), "%s", colon + 1);
    char *save = NULL;
    for (char *kv = strtok_r(buf, ",", &save); kv != NULL; kv = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(kv, '=');
        double v;
        if (eq == NULL || parse_num(eq + 1, &v) != CUDIS_OK) {
            return fail(why, why_len, CUDIS_E_INVAL, "generator '%s': bad parameter '%s'", spec,
                        kv);
        }
        *eq = '\0';
        if (strcmp(kv, "s") == 0 || strcmp(kv, "alpha") == 0 || strcmp(kv, "theta") == 0) {
            g->exponent = v;
        } else if (strcmp(kv, "keys") == 0) {
            g->keys = (uint64_t)v;
        } else if (strcmp(kv, "n") == 0 || strcmp(kv, "requests") == 0) {
            g->requests = (uint64_t)v;
        } else if (strcmp(kv, "scan") == 0) {
            g->scan_frac = v;
        } else if (strcmp(kv, "len") == 0) {
            g->scan_len = (uint32_t)v;
        } else if (strcmp(kv, "scankeys") == 0) {
            g->scan_keys = (uint64_t)v;
        } else if (strcmp(kv, "insert") == 0) {
            g->insert_frac = v;
        } else if (strcmp(kv, "seed") == 0) {
            g->seed = (uint64_t)v;
        } else {
            return fail(why, why_len, CUDIS_E_INVAL,
                        "generator '%s': unknown parameter '%s' (s, keys, n, scan, len, "
                        "scankeys, insert, seed)",
                        spec, kv);
        }
    }
    if (g->keys == 0 || g->keys >= UINT32_MAX || g->requests == 0 || g->scan_frac >= 1.0 ||
        g->scan_len == 0 || g->insert_frac >= 1.0) {
        return fail(why, why_len, CUDIS_E_INVAL,
                    "generator '%s': need 0 < keys < 2^32, n > 0, scan < 1, len > 0, insert < 1",
                    spec);
    }
    return CUDIS_OK;
}

/* Ids of the different key ranges never collide: the top byte says which. */
#define SIM_RANGE_MAIN 0x0000000000000000ull
#define SIM_RANGE_SCAN 0x0100000000000000ull
#define SIM_ID_MASK 0x00ffffffffffffffull

static uint64_t scatter(uint64_t range, uint64_t i, uint64_t seed)
{
    /* A bijection on 56-bit ids (xor-shift-multiply rounds in the low bits). */
    uint64_t x = (i + seed * 0x9e3779b97f4a7c15ull) & SIM_ID_MASK;
    for (int r = 0; r < 2; r++) {
        x ^= x >> 29;
        x = (x * 0xbf58476d1ce4e5b9ull) & SIM_ID_MASK; /* odd multiplier: bijective mod 2^56 */
        x ^= x >> 32;
    }
    return range | x;
}

int sim_trace_generate(const sim_gen_cfg *g, sim_trace *t, char *why, size_t why_len)
{
    memset(t, 0, sizeof(*t));
    static const char *const kn[] = {"?", "zipf", "uniform", "scanzipf", "latest"};
    const char *kname = (g->kind >= 1 && g->kind <= 4) ? kn[g->kind] : "?";
    switch (g->kind) {
    case SIM_GEN_UNIFORM:
        snprintf(t->source, sizeof(t->source), "uniform:keys=%llu,n=%llu,seed=%llu",
                 (unsigned long long)g->keys, (unsigned long long)g->requests,
                 (unsigned long long)g->seed);
        break;
    case SIM_GEN_SCANZIPF:
        snprintf(t->source, sizeof(t->source),
                 "scanzipf:s=%g,keys=%llu,n=%llu,scan=%g,len=%u,seed=%llu", g->exponent,
                 (unsigned long long)g->keys, (unsigned long long)g->requests, g->scan_frac,
                 g->scan_len, (unsigned long long)g->seed);
        break;
    case SIM_GEN_LATEST:
        snprintf(t->source, sizeof(t->source), "latest:s=%g,keys=%llu,n=%llu,insert=%g,seed=%llu",
                 g->exponent, (unsigned long long)g->keys, (unsigned long long)g->requests,
                 g->insert_frac, (unsigned long long)g->seed);
        break;
    default:
        snprintf(t->source, sizeof(t->source), "%s:s=%g,keys=%llu,n=%llu,seed=%llu", kname,
                 g->exponent, (unsigned long long)g->keys, (unsigned long long)g->requests,
                 (unsigned long long)g->seed);
        break;
    }
    /* A short name for tables and file names: kind and exponent. */
    if (g->kind == SIM_GEN_UNIFORM) {
        snprintf(t->name, sizeof(t->name), "uniform-%llu", (unsigned long long)g->keys);
    } else {
        snprintf(t->name, sizeof(t->name), "%s-%g-%llu", kname, g->exponent,
                 (unsigned long long)g->keys);
    }
    if (g->kind < SIM_GEN_ZIPF || g->kind > SIM_GEN_LATEST) {
        return fail(why, why_len, CUDIS_E_INVAL, "unknown generator kind %d", g->kind);
    }
    t->keys = malloc(g->requests * sizeof(uint64_t));
    if (t->keys == NULL) {
        return fail(why, why_len, CUDIS_E_NOMEM, "out of memory for %llu requests",
                    (unsigned long long)g->requests);
    }
    t->n = g->requests;
    sim_zipf z = {0};
    if (g->kind != SIM_GEN_UNIFORM) {
        int rc = sim_zipf_init(&z, g->keys, g->exponent);
        if (rc != CUDIS_OK) {
            sim_trace_free(t);
            return fail(why, why_len, rc, "cannot build the Zipf table for %llu keys",
                        (unsigned long long)g->keys);
        }
    }
    sim_rng r;
    sim_rng_seed(&r, g->seed);
    uint64_t scan_keys = g->scan_keys != 0 ? g->scan_keys : 10 * g->keys;
    double q_scan = g->kind == SIM_GEN_SCANZIPF
                        ? g->scan_frac / ((double)g->scan_len * (1.0 - g->scan_frac) + g->scan_frac)
                        : 0;
    uint64_t scan_left = 0, scan_pos = 0;
    uint64_t newest = g->keys - 1; /* latest: ids 0..newest exist */
    for (uint64_t i = 0; i < g->requests; i++) {
        uint64_t id;
        switch (g->kind) {
        case SIM_GEN_UNIFORM:
            id = scatter(SIM_RANGE_MAIN, sim_rng_next(&r) % g->keys, g->seed);
            break;
        case SIM_GEN_SCANZIPF:
            if (scan_left == 0 && sim_rng_double(&r) < q_scan) {
                scan_left = g->scan_len;
            }
            if (scan_left > 0) {
                scan_left--;
                id = scatter(SIM_RANGE_SCAN, scan_pos, g->seed);
                scan_pos = (scan_pos + 1) % scan_keys;
                break;
            }
            id = scatter(SIM_RANGE_MAIN, sim_zipf_draw(&z, sim_rng_double(&r), sim_rng_double(&r)),
                         g->seed);
            break;
        case SIM_GEN_LATEST:
            if (sim_rng_double(&r) < g->insert_frac) {
                newest++;
                id = scatter(SIM_RANGE_MAIN, newest, g->seed);
            } else {
                uint64_t rank = sim_zipf_draw(&z, sim_rng_double(&r), sim_rng_double(&r));
                id = scatter(SIM_RANGE_MAIN, newest - rank, g->seed);
            }
            break;
        default:
            id = scatter(SIM_RANGE_MAIN, sim_zipf_draw(&z, sim_rng_double(&r), sim_rng_double(&r)),
                         g->seed);
            break;
        }
        t->keys[i] = id;
    }
    sim_zipf_deinit(&z);
    int rc = sim_trace_finish(t);
    if (rc != CUDIS_OK) {
        sim_trace_free(t);
        return fail(why, why_len, rc, "out of memory");
    }
    return CUDIS_OK;
}

/* ------------------------------------------------------------------------
 * Key sets, capacities, sizes
 * ---------------------------------------------------------------------- */

int sim_kset_init(sim_kset *s, size_t expected)
{
    memset(s, 0, sizeof(*s));
    uint64_t cap = 16;
    while (cap < 2 * (uint64_t)expected) {
        cap <<= 1;
    }
    s->keys = malloc(cap * sizeof(uint64_t));
    s->gen = calloc(cap, sizeof(uint32_t));
    if (s->keys == NULL || s->gen == NULL) {
        sim_kset_deinit(s);
        return CUDIS_E_NOMEM;
    }
    s->mask = cap - 1;
    s->cur = 1;
    return CUDIS_OK;
}

void sim_kset_deinit(sim_kset *s)
{
    free(s->keys);
    free(s->gen);
    s->keys = NULL;
    s->gen = NULL;
}

void sim_kset_clear(sim_kset *s)
{
    s->count = 0;
    if (++s->cur == 0) {
        memset(s->gen, 0, (s->mask + 1) * sizeof(uint32_t));
        s->cur = 1;
    }
}

bool sim_kset_add(sim_kset *s, uint64_t key)
{
    uint64_t i = sim_mix64(key) & s->mask;
    while (s->gen[i] == s->cur) {
        if (s->keys[i] == key) {
            return false;
        }
        i = (i + 1) & s->mask;
    }
    s->gen[i] = s->cur;
    s->keys[i] = key;
    s->count++;
    return true;
}

size_t sim_count_unique(const uint64_t *keys, size_t n)
{
    sim_kset s;
    if (sim_kset_init(&s, n > 0 ? n : 1) != CUDIS_OK) {
        return (size_t)-1;
    }
    for (size_t i = 0; i < n; i++) {
        sim_kset_add(&s, keys[i]);
    }
    size_t c = s.count;
    sim_kset_deinit(&s);
    return c;
}

uint64_t sim_capacity_objects(uint64_t unique, double fraction)
{
    /* The small epsilon keeps exact multiples of 32 from rounding down when
     * unique * fraction is not representable (e.g. 6400 * 0.05). */
    double x = (double)unique * fraction / 32.0;
    uint64_t k = x > 0 ? (uint64_t)floor(x + 1e-9) : 0;
    return k > 0 ? k * 32 : 32;
}

int sim_parse_bytes(const char *s, uint64_t *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || errno != 0 || !(v >= 0)) {
        return CUDIS_E_INVAL;
    }
    double mul = 1;
    switch (*end) {
    case 'k':
    case 'K':
        mul = 1024.0;
        end++;
        break;
    case 'm':
    case 'M':
        mul = 1024.0 * 1024;
        end++;
        break;
    case 'g':
    case 'G':
        mul = 1024.0 * 1024 * 1024;
        end++;
        break;
    case 't':
    case 'T':
        mul = 1024.0 * 1024 * 1024 * 1024;
        end++;
        break;
    default: break;
    }
    if (mul > 1 && (strcmp(end, "iB") == 0 || strcmp(end, "B") == 0)) {
        end += strlen(end);
    } else if (mul == 1 && strcmp(end, "B") == 0) {
        end++;
    }
    if (*end != '\0' || v * mul >= 1.8e19) {
        return CUDIS_E_INVAL;
    }
    *out = (uint64_t)(v * mul + 0.5);
    return CUDIS_OK;
}

const char *sim_format_bytes(uint64_t v, char *buf, size_t cap)
{
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int u = 0;
    uint64_t x = v;
    while (u < 4 && x >= 1024 && x % 1024 == 0) {
        x /= 1024;
        u++;
    }
    if (u == 0 && v >= 1024 * 1024) {
        snprintf(buf, cap, "%.1fMiB", (double)v / (1024.0 * 1024));
    } else {
        snprintf(buf, cap, "%llu%s", (unsigned long long)x, units[u]);
    }
    return buf;
}
