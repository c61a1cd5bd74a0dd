/*
 * resp.h - the RESP request parser (multibulk and inline, incremental,
 * zero-copy: arguments point into the caller's input buffer) and the reply
 * writer (RESP2 and RESP3 types appended to an sbuf, no allocation per reply
 * beyond the buffer's amortised growth).
 *
 * The parser keeps the state of a partly received command, so a request
 * split over many reads is parsed once, not re-scanned; protocol errors carry
 * Redis 7.0's exact wording.
 */
#ifndef SERVER_RESP_H
#define SERVER_RESP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util.h"

#define RESP_INLINE_MAX (64 * 1024) /* Redis's PROTO_INLINE_MAX_SIZE */
#define RESP_UNAUTH_MAX_ARGS 10     /* multibulk length before AUTH */
#define RESP_UNAUTH_MAX_BULK 16384  /* bulk length before AUTH */

enum { RESP_MORE = 0, RESP_CMD = 1, RESP_ERR = -1 };

typedef struct resp_parser {
    /* limits, set by the caller before each parse */
    long long max_bulk;  /* proto-max-bulk-len */
    bool unauth;         /* apply the before-AUTH limits */
    /* state of the command being parsed */
    int state;           /* 0 idle, 1 in multibulk */
    long long mb_left;   /* bulks still expected */
    long long bulk_len;  /* -1: expecting a $ header */
    size_t cmd_start;    /* buffer offset of the command's first byte */
    int argc;
    int argv_cap;
    size_t *arg_off;     /* offsets from the buffer start while parsing */
    uint32_t *arg_len;
    char **argv;         /* set when RESP_CMD is returned */
    const char *err;     /* protocol error text when RESP_ERR */
    char errbuf[64];
    size_t big_need;     /* bytes needed to finish the current big bulk (read hint) */
} resp_parser;

void resp_parser_init(resp_parser *p);
void resp_parser_deinit(resp_parser *p);

/* Parse from buf[*pos .. len). RESP_CMD: a complete command is in p->argv /
 * p->arg_len / p->argc (pointers into buf, valid until buf changes) and
 * *pos is past it; RESP_MORE: need more bytes (state kept; *pos may have
 * advanced past consumed headers only when idle); RESP_ERR: p->err holds
 * the text (without "ERR "). Inline commands are split in place (buf is
 * modified). A command with zero arguments is skipped silently. */
int resp_parse(resp_parser *p, char *buf, size_t len, size_t *pos);

/* The buffer's bytes before `delta` were discarded (moved down by delta):
 * shift the stored offsets. Only valid when delta <= p->cmd_start. */
void resp_parser_shift(resp_parser *p, size_t delta);

/* Between commands: free argument arrays that a command of more than
 * 1024 arguments grew (the next command reserves its own). True when
 * something was freed. */
bool resp_parser_trim(resp_parser *p);

/* True when a command is partly parsed (its first byte is at cmd_start). */
bool resp_parser_busy(const resp_parser *p);

/* ------------------------------------------------------------------------
 * Reply writer
 * ---------------------------------------------------------------------- */

void resp_status(sbuf *b, const char *s);            /* +s */
void resp_error(sbuf *b, const char *s);             /* -s ("ERR ..." included in s) */
void resp_errorf(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void resp_int(sbuf *b, long long v);                 /* :v */
void resp_bulk(sbuf *b, const void *p, size_t n);    /* $n */
void resp_bulks(sbuf *b, const char *s);
void resp_bulk_ll(sbuf *b, long long v);             /* integer as bulk text */
void resp_null(sbuf *b, int proto);                  /* $-1 or _ */
void resp_null_array(sbuf *b, int proto);            /* *-1 or _ */
void resp_array(sbuf *b, long n);                    /* *n */
void resp_map(sbuf *b, long n, int proto);           /* %n or *2n */
void resp_set(sbuf *b, long n, int proto);           /* ~n or *n */
void resp_double(sbuf *b, double v, int proto);      /* ,v or bulk */
void resp_verbatim(sbuf *b, const char *p, size_t n, int proto); /* =n txt: or bulk */

#endif /* SERVER_RESP_H */
