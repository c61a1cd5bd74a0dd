/*
 * cudis_internal.h - private structures of libcudis shared by its files:
 * the connection (socket, readers, output buffer) and the pipelined
 * exchange loop that every call goes through.
 */
#ifndef CUDIS_INTERNAL_H
#define CUDIS_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include <hiredis/hiredis.h>

#include "cudis.h"

struct cudis_conn {
    cudis_options opt; /* strings below are our copies */
    char *host, *unix_path, *password;
    redisContext *ctx;     /* owns the socket (used for connecting only) */
    redisReader *rd_plain; /* default hiredis reply objects */
    redisReader *rd_vec;   /* vector calls: parses straight into caller rows */
    int fd;
    bool broken;
    char errstr[256];
    char *obuf; /* pending request bytes */
    size_t olen, ooff, ocap;
    char *ibuf; /* read buffer */
    size_t icap;
};

struct cudis_table {
    char *name;
    size_t name_len;
    size_t row_bytes;
    cudis_table_options opt;
    size_t key_len;    /* name_len + 1 + 8 */
    char key_head[32]; /* "$<key_len>\r\n" */
    size_t key_head_len;
    char row_head[32]; /* "$<row_bytes>\r\n" */
    size_t row_head_len;
};

/* One pipelined exchange: `expect` replies will come back; `produce`
 * (optional) appends further commands to the output buffer and returns 1
 * while it has more to send, 0 when done, or a negative error; `on_reply`
 * gets each reply in order (index, the reader's object). */
typedef struct cudis_xfer {
    redisReader *rd;
    size_t expect;
    int (*produce)(void *arg, cudis_conn *c);
    void (*on_reply)(void *arg, size_t idx, void *reply);
    void *arg;
} cudis_xfer;

/* Run the exchange on c (reconnecting first if broken). Returns 0 when all
 * expected replies arrived, else the error (c is then broken). */
int cudis_conn_xfer(cudis_conn *c, cudis_xfer *x);

/* Prepare c for a new call: reconnect if broken, clear the output buffer. */
int cudis_conn_begin(cudis_conn *c);

/* Output buffer helpers (RESP encoding); return 0 or CUDIS_E_NOMEM. */
int cudis_ob_reserve(cudis_conn *c, size_t more);
void cudis_ob_put(cudis_conn *c, const void *p, size_t n); /* after reserve */
void cudis_ob_header(cudis_conn *c, char type, size_t n);  /* "*n\r\n" / "$n\r\n", after reserve */
int cudis_ob_command(cudis_conn *c, int argc, const char **argv, const size_t *argvlen);
static inline size_t cudis_ob_pending(const cudis_conn *c)
{
    return c->olen - c->ooff;
}

/* Record an error message on c and return code. */
int cudis_conn_fail(cudis_conn *c, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif /* CUDIS_INTERNAL_H */
