/*
 * cudis_vec.c - tables of fixed-width rows and the vector calls
 * cudis_vget()/cudis_vset(). Ids become keys by the scheme documented in
 * cudis.h ("<table>:" + 8-byte big-endian id). A batch is encoded chunk by
 * chunk while the socket drains (MGET/MSET of chunk_rows ids each, all in
 * one pipeline), and replies are parsed by a hiredis reader whose object
 * callbacks copy each row straight into the caller's buffer: no reply
 * objects, no per-row allocation.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cudis_internal.h"

void cudis_table_options_default(cudis_table_options *o)
{
    o->chunk_rows = 256;
    o->ttl_mode = CUDIS_TTL_SET_PX;
}

cudis_table *cudis_table_create(const char *name, size_t row_bytes, const cudis_table_options *opt)
{
    if (!name || row_bytes == 0 || row_bytes > (512u << 20)) {
        return NULL;
    }
    size_t nl = strlen(name);
    if (nl == 0 || nl > 200) {
        return NULL;
    }
    cudis_table *t = calloc(1, sizeof(*t));
    if (!t || !(t->name = strdup(name))) {
        free(t);
        return NULL;
    }
    t->name_len = nl;
    t->row_bytes = row_bytes;
    cudis_table_options_default(&t->opt);
    if (opt) {
        t->opt = *opt;
    }
    if (t->opt.chunk_rows == 0) {
        t->opt.chunk_rows = 256;
    }
    if (t->opt.ttl_mode != CUDIS_TTL_MSET_PEXPIRE && t->opt.ttl_mode != CUDIS_TTL_SET_PX) {
        t->opt.ttl_mode = CUDIS_TTL_SET_PX;
    }
    t->key_len = nl + 1 + 8;
    t->key_head_len = (size_t)snprintf(t->key_head, sizeof(t->key_head), "$%zu\r\n", t->key_len);
    t->row_head_len = (size_t)snprintf(t->row_head, sizeof(t->row_head), "$%zu\r\n", row_bytes);
    return t;
}

void cudis_table_destroy(cudis_table *t)
{
    if (t) {
        free(t->name);
        free(t);
    }
}

size_t cudis_table_row_bytes(const cudis_table *t)
{
    return t->row_bytes;
}

static void put_be64(uint8_t *p, uint64_t v)
{
    for (int i = 7; i >= 0; i--) {
        p[i] = (uint8_t)v;
        v >>= 8;
    }
}

size_t cudis_table_key(const cudis_table *t, uint64_t id, uint8_t *buf, size_t cap)
{
    if (cap < t->key_len) {
        return 0;
    }
    memcpy(buf, t->name, t->name_len);
    buf[t->name_len] = ':';
    put_be64(buf + t->name_len + 1, id);
    return t->key_len;
}

/* Append one key as a RESP bulk string (space reserved by the caller). */
static void ob_key(cudis_conn *c, const cudis_table *t, uint64_t id)
{
    cudis_ob_put(c, t->key_head, t->key_head_len);
    uint8_t *p = (uint8_t *)c->obuf + c->olen;
    memcpy(p, t->name, t->name_len);
    p[t->name_len] = ':';
    put_be64(p + t->name_len + 1, id);
    p[t->key_len] = '\r';
    p[t->key_len + 1] = '\n';
    c->olen += t->key_len + 2;
}

static void ob_row(cudis_conn *c, const cudis_table *t, const uint8_t *row)
{
    cudis_ob_put(c, t->row_head, t->row_head_len);
    cudis_ob_put(c, row, t->row_bytes);
    cudis_ob_put(c, "\r\n", 2);
}

/* ===================================================================== */
/* State of one vector call, seen by the reader callbacks                */
/* ===================================================================== */

enum { VK_MGET, VK_MSET, VK_SETPX, VK_PEXPIRE };

typedef struct vec_state {
    cudis_conn *c;
    const cudis_table *t;
    size_t n;
    const uint64_t *ids;
    uint8_t *rows;        /* vget destination */
    uint8_t *found;       /* vget: row states */
    const uint8_t *srows; /* vset source */
    uint8_t *ok;          /* vset: 0 unconfirmed, 1 confirmed, 2 MSET ok awaiting PEXPIRE */
    bool is_set;
    bool ttl;
    char ttl_str[24];
    size_t ttl_len;
    size_t chunk;
    size_t per_chunk; /* replies per full chunk */
    size_t produced;  /* rows encoded so far */
    /* the reply being parsed */
    size_t cur;
    int cur_kind;
    size_t cur_base, cur_count;
    bool cur_bad;       /* the current reply had an unexpected shape */
    size_t cur_bad_len; /* bad_len counted in it (undone if it is malformed) */
    /* outcome */
    size_t hits, misses, bad_len, answered;
    int err; /* first error (CUDIS_E_SERVER / CUDIS_E_PROTO) */
} vec_state;

static void vs_set_current(vec_state *s)
{
    const size_t ch = s->chunk;
    s->cur_bad = false;
    s->cur_bad_len = 0;
    if (!s->is_set) {
        s->cur_kind = VK_MGET;
        s->cur_base = s->cur * ch;
        s->cur_count = s->n - s->cur_base < ch ? s->n - s->cur_base : ch;
    } else if (!s->ttl) {
        s->cur_kind = VK_MSET;
        s->cur_base = s->cur * ch;
        s->cur_count = s->n - s->cur_base < ch ? s->n - s->cur_base : ch;
    } else if (s->t->opt.ttl_mode == CUDIS_TTL_SET_PX) {
        s->cur_kind = VK_SETPX;
        s->cur_base = s->cur;
        s->cur_count = 1;
    } else {
        size_t k = s->cur / s->per_chunk, off = s->cur % s->per_chunk;
        if (off == 0) {
            s->cur_kind = VK_MSET;
            s->cur_base = k * ch;
            s->cur_count = s->n - s->cur_base < ch ? s->n - s->cur_base : ch;
        } else {
            s->cur_kind = VK_PEXPIRE;
            s->cur_base = k * ch + off - 1;
            s->cur_count = 1;
        }
    }
}

static void vs_error(vec_state *s, int code, const char *what, const char *msg, size_t len)
{
    if (s->err == 0) {
        s->err = code;
        cudis_conn_fail(s->c, code, "%s: %.*s", what, (int)(len > 180 ? 180 : len), msg);
    }
}

static char vs_sentinel;

static void *vs_string(const redisReadTask *task, char *str, size_t len)
{
    vec_state *s = task->privdata;
    const cudis_table *t = s->t;
    if (task->parent) {
        if (s->cur_kind != VK_MGET || task->parent->parent || (size_t)task->idx >= s->cur_count) {
            s->cur_bad = true;
            return &vs_sentinel;
        }
        size_t i = s->cur_base + (size_t)task->idx;
        s->answered++;
        if (task->type == REDIS_REPLY_STRING && len == t->row_bytes) {
            memcpy(s->rows + i * t->row_bytes, str, len);
            s->found[i] = CUDIS_ROW_HIT;
            s->hits++;
        } else {
            s->found[i] = CUDIS_ROW_MISS;
            s->misses++;
            s->bad_len++;
            s->cur_bad_len++;
        }
        return &vs_sentinel;
    }
    if (task->type == REDIS_REPLY_ERROR) {
        vs_error(s, CUDIS_E_SERVER, "server error", str, len);
    } else if (task->type == REDIS_REPLY_STATUS && len == 2 && memcmp(str, "OK", 2) == 0 &&
               (s->cur_kind == VK_MSET || s->cur_kind == VK_SETPX)) {
        uint8_t v = (s->cur_kind == VK_MSET && s->ttl) ? 2 : 1;
        for (size_t i = 0; i < s->cur_count; i++) {
            s->ok[s->cur_base + i] = v;
        }
    } else {
        s->cur_bad = true;
    }
    return &vs_sentinel;
}

static void *vs_array(const redisReadTask *task, int elements)
{
    vec_state *s = task->privdata;
    if (task->parent || s->cur_kind != VK_MGET || elements < 0 ||
        (size_t)elements != s->cur_count) {
        s->cur_bad = true;
    }
    return &vs_sentinel;
}

static void *vs_integer(const redisReadTask *task, long long v)
{
    vec_state *s = task->privdata;
    if (task->parent || s->cur_kind != VK_PEXPIRE) {
        s->cur_bad = true;
    } else if (v == 1 && s->ok[s->cur_base] == 2) {
        s->ok[s->cur_base] = 1;
    }
    return &vs_sentinel;
}

static void *vs_nil(const redisReadTask *task)
{
    vec_state *s = task->privdata;
    if (task->parent && s->cur_kind == VK_MGET && !task->parent->parent &&
        (size_t)task->idx < s->cur_count) {
        size_t i = s->cur_base + (size_t)task->idx;
        s->found[i] = CUDIS_ROW_MISS;
        s->misses++;
        s->answered++;
    } else {
        s->cur_bad = true;
    }
    return &vs_sentinel;
}

static void vs_free(void *obj)
{
    (void)obj;
}

static redisReplyObjectFunctions vs_functions = {
    .createString = vs_string,
    .createArray = vs_array,
    .createInteger = vs_integer,
    .createNil = vs_nil,
    .freeObject = vs_free,
};

redisReader *cudis_vec_reader_create(void); /* used by cudis_conn.c */
redisReader *cudis_vec_reader_create(void)
{
    return redisReaderCreateWithFunctions(&vs_functions);
}

/* The current reply has the wrong shape: none of its rows is trustworthy. */
static void vs_drop_current(vec_state *s)
{
    if (s->cur_base >= s->n) {
        return;
    }
    if (!s->is_set) {
        s->bad_len -= s->cur_bad_len;
        for (size_t i = 0; i < s->cur_count; i++) {
            size_t k = s->cur_base + i;
            if (s->found[k] == CUDIS_ROW_HIT) {
                s->hits--;
            } else if (s->found[k] == CUDIS_ROW_MISS) {
                s->misses--;
            }
            if (s->found[k] != CUDIS_ROW_FAILED) {
                s->answered--;
            }
            s->found[k] = CUDIS_ROW_FAILED;
        }
    } else {
        for (size_t i = 0; i < s->cur_count; i++) {
            s->ok[s->cur_base + i] = 0;
        }
    }
    s->cur_bad_len = 0;
}

static void vs_on_reply(void *arg, size_t idx, void *reply)
{
    (void)reply;
    vec_state *s = arg;
    (void)idx;
    if (s->cur_bad) {
        vs_drop_current(s);
        vs_error(s, CUDIS_E_PROTO, "unexpected reply", "shape", 5);
    }
    s->cur++;
    vs_set_current(s);
}

/* ===================================================================== */
/* Producers: encode one chunk per call                                  */
/* ===================================================================== */

static int produce_get(void *arg, cudis_conn *c)
{
    vec_state *s = arg;
    const cudis_table *t = s->t;
    size_t base = s->produced, cnt = s->n - base < s->chunk ? s->n - base : s->chunk;
    if (cudis_ob_reserve(c, 48 + cnt * (t->key_head_len + t->key_len + 2))) {
        return CUDIS_E_NOMEM;
    }
    cudis_ob_header(c, '*', cnt + 1);
    cudis_ob_put(c, "$4\r\nMGET\r\n", 10);
    for (size_t i = 0; i < cnt; i++) {
        ob_key(c, t, s->ids[base + i]);
    }
    s->produced += cnt;
    return s->produced < s->n;
}

static int produce_set(void *arg, cudis_conn *c)
{
    vec_state *s = arg;
    const cudis_table *t = s->t;
    size_t base = s->produced, cnt = s->n - base < s->chunk ? s->n - base : s->chunk;
    size_t per_key = t->key_head_len + t->key_len + 2;
    size_t per_row = t->row_head_len + t->row_bytes + 2;
    size_t per_ttl = 24 + s->ttl_len;
    if (cudis_ob_reserve(c, 64 + cnt * (per_key * 2 + per_row + 32 + per_ttl))) {
        return CUDIS_E_NOMEM;
    }
    bool setpx = s->ttl && t->opt.ttl_mode == CUDIS_TTL_SET_PX;
    if (!setpx) {
        cudis_ob_header(c, '*', 1 + 2 * cnt);
        cudis_ob_put(c, "$4\r\nMSET\r\n", 10);
        for (size_t i = 0; i < cnt; i++) {
            ob_key(c, t, s->ids[base + i]);
            ob_row(c, t, s->srows + (base + i) * t->row_bytes);
        }
    }
    if (s->ttl) {
        for (size_t i = 0; i < cnt; i++) {
            if (setpx) {
                cudis_ob_put(c, "*5\r\n$3\r\nSET\r\n", 13);
                ob_key(c, t, s->ids[base + i]);
                ob_row(c, t, s->srows + (base + i) * t->row_bytes);
                cudis_ob_put(c, "$2\r\nPX\r\n", 8);
            } else {
                cudis_ob_put(c, "*3\r\n$7\r\nPEXPIRE\r\n", 17);
                ob_key(c, t, s->ids[base + i]);
            }
            cudis_ob_header(c, '$', s->ttl_len);
            cudis_ob_put(c, s->ttl_str, s->ttl_len);
            cudis_ob_put(c, "\r\n", 2);
        }
    }
    s->produced += cnt;
    return s->produced < s->n;
}

/* ===================================================================== */
/* The calls                                                             */
/* ===================================================================== */

static int vec_run(cudis_conn *c, vec_state *s, size_t expect)
{
    int rc = cudis_conn_begin(c);
    if (rc) {
        return rc;
    }
    s->c = c;
    s->chunk = s->t->opt.chunk_rows;
    s->per_chunk = s->chunk + 1;
    s->cur = 0;
    vs_set_current(s);
    c->errstr[0] = '\0';
    c->rd_vec->privdata = s;
    cudis_xfer x = {.rd = c->rd_vec,
                    .expect = expect,
                    .produce = s->is_set ? produce_set : produce_get,
                    .on_reply = vs_on_reply,
                    .arg = s};
    rc = cudis_conn_xfer(c, &x);
    if (rc != 0 && s->cur_bad) {
        vs_drop_current(s); /* cut short, and already of the wrong shape */
    }
    if (c->rd_vec) {
        c->rd_vec->privdata = NULL;
    }
    if (rc == 0 && s->err) {
        rc = s->err;
        if (rc == CUDIS_E_PROTO) {
            c->broken = true;
        }
    }
    return rc;
}

int cudis_vget(cudis_conn *c, const cudis_table *t, size_t n, const uint64_t *ids, void *rows,
               uint8_t *found, cudis_vresult *res)
{
    vec_state s = {.t = t, .n = n, .ids = ids, .rows = rows, .found = found};
    if (n > 0) {
        memset(found, CUDIS_ROW_FAILED, n);
    }
    int rc = 0;
    if (n > 0) {
        rc = vec_run(c, &s, (n + t->opt.chunk_rows - 1) / t->opt.chunk_rows);
    }
    if (res) {
        res->answered = s.answered;
        res->hits = s.hits;
        res->misses = s.misses;
        res->bad_len = s.bad_len;
        res->failed = n - s.answered;
    }
    return rc;
}

int cudis_vset(cudis_conn *c, const cudis_table *t, size_t n, const uint64_t *ids, const void *rows,
               int64_t ttl_ms, uint8_t *ok, cudis_vresult *res)
{
    uint8_t *own = NULL;
    if (!ok && n > 0) {
        ok = own = malloc(n);
        if (!own) {
            return cudis_conn_fail(c, CUDIS_E_NOMEM, "out of memory");
        }
    }
    if (n > 0) {
        memset(ok, 0, n);
    }
    vec_state s = {.t = t, .n = n, .ids = ids, .srows = rows, .ok = ok, .is_set = true};
    if (ttl_ms < 0) {
        free(own);
        return cudis_conn_fail(c, CUDIS_E_INVAL, "negative ttl");
    }
    s.ttl = ttl_ms > 0;
    s.ttl_len = (size_t)snprintf(s.ttl_str, sizeof(s.ttl_str), "%lld", (long long)ttl_ms);
    int rc = 0;
    if (n > 0) {
        size_t chunks = (n + t->opt.chunk_rows - 1) / t->opt.chunk_rows;
        size_t expect = chunks;
        if (s.ttl) {
            expect = t->opt.ttl_mode == CUDIS_TTL_SET_PX ? n : chunks + n;
        }
        rc = vec_run(c, &s, expect);
    }
    size_t confirmed = 0;
    for (size_t i = 0; i < n; i++) {
        if (ok[i] != 1) {
            ok[i] = 0;
        }
        confirmed += ok[i];
    }
    if (rc == 0 && confirmed != n) {
        rc = cudis_conn_fail(c, CUDIS_E_SERVER, "%zu of %zu rows not confirmed", n - confirmed, n);
    }
    if (res) {
        memset(res, 0, sizeof(*res));
        res->answered = confirmed;
        res->failed = n - confirmed;
    }
    free(own);
    return rc;
}
