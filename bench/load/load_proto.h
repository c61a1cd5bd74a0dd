/*
 * load_proto.h - request encoders and streaming reply parsers for
 * cudis-bench: RESP2 (cudis, redis-server) and memcached's text protocol.
 *
 * Encoders append one request to a growable byte buffer. Parsers are
 * incremental: feed them whatever bytes arrived, in any fragmentation; they
 * consume bytes up to the end of the current reply and say when one reply
 * is complete, with its hit and miss counts. Values are skipped, never
 * copied. Not thread-safe: one parser per connection.
 */
#ifndef LOAD_PROTO_H
#define LOAD_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum load_protocol {
    LOAD_PROTO_RESP = 0,
    LOAD_PROTO_MEMCACHE = 1,
};

/* A growable byte buffer. */
struct load_buf {
    char *data;
    size_t len, cap;
};

/* Frees the buffer's memory (the struct itself is the caller's). */
void load_buf_free(struct load_buf *b);

/* Appends bytes; returns 0 or CUDIS_E_NOMEM. */
int load_buf_append(struct load_buf *b, const void *p, size_t n);

/* Encoders: append one request. Keys and values are binary-safe for RESP;
 * memcached keys must not contain spaces or control characters. Each
 * returns 0 or CUDIS_E_NOMEM. */
int load_encode_get(struct load_buf *b, enum load_protocol proto, const char *key, size_t klen);
int load_encode_set(struct load_buf *b, enum load_protocol proto, const char *key, size_t klen,
                    const char *val, size_t vlen);
/* A command of no arguments (RESP only: MULTI, EXEC). */
int load_encode_word(struct load_buf *b, const char *word);
/* Multi-key get: RESP MGET k1..kn, memcached "get k1 ... kn". keys[i] is
 * klens[i] bytes long. */
int load_encode_mget(struct load_buf *b, enum load_protocol proto, const char *const *keys,
                     const size_t *klens, size_t n);
/* RESP "cmd hash f1..fn [val]": HGET, HSET, HMGET of fields of one hash
 * (cudis-bench --hash). */
int load_encode_hash(struct load_buf *b, const char *cmd, const char *hash,
                     const char *const *fields, const size_t *flens, size_t n, const char *val,
                     size_t vlen);

/* One parsed reply. */
struct load_reply {
    uint32_t hits;   /* values returned (non-nil bulks / VALUE lines) */
    uint32_t misses; /* RESP nil bulks (memcached: caller computes) */
    bool error;      /* -ERR..., ERROR, CLIENT_ERROR, SERVER_ERROR, NOT_STORED */
};

#define LOAD_PARSER_LINE_MAX 1024

/* Streaming reply parser state. */
struct load_parser {
    enum load_protocol proto;
    uint64_t skip;     /* payload bytes (incl. CRLF) still to skip */
    int64_t pending;   /* RESP: values still needed to finish this reply */
    bool in_reply;
    struct load_reply cur;
    size_t line_len;   /* bytes held in line[] from an earlier fragment */
    char line[LOAD_PARSER_LINE_MAX];
};

/* Resets the parser for protocol proto (at a reply boundary). */
void load_parser_init(struct load_parser *p, enum load_protocol proto);

/* Consumes bytes of data[0..len). Stops right after a reply completes:
 * returns the bytes consumed and sets *done = 1 with *out filled; or
 * consumes everything (*done = 0, reply incomplete: feed more later); or
 * sets *done = -1 on a protocol violation (the stream cannot be resumed). */
size_t load_parser_feed(struct load_parser *p, const char *data, size_t len,
                        struct load_reply *out, int *done);

#endif /* LOAD_PROTO_H */
