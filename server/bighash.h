/*
 * bighash.h - hashes kept in chunks (bighash.c): the registry, the marks
 * that keep it right, and the command paths for a big hash.
 */
#ifndef BIGHASH_H
#define BIGHASH_H

#include <stdbool.h>
#include <stdint.h>

#include "cudis_op.h"
#include "util.h"

typedef struct conn conn;
typedef struct loop loop;

/* Engine database bit of chunks: a key's chunks live in its database |
 * CUDIS_DB_INTERNAL (0x80: so at most 128 databases), which the engine
 * counts in no keyspace statistic (a hash evicted whole for a chunk is
 * counted here, srv.bh_evicted). */
#define BH_HIDDEN CUDIS_DB_INTERNAL

/* The commands with a chunked path; the reads first. */
enum {
    BH_HGET = 1,
    BH_HEXISTS,
    BH_HSTRLEN,
    BH_HMGET,
    BH_HLEN,
    BH_HSET,
    BH_HMSET,
    BH_HSETNX,
    BH_HDEL,
    BH_HINCRBY,
    BH_HINCRBYFLOAT
};

bool bighash_any(void); /* some big hash exists: cheap */
bool bighash_known(uint8_t pdb, const char *key, uint32_t klen);
bool bighash_work(void); /* marks or conversions wait for bighash_tend */
/* Settle marks and convert waiting hashes, alone (between commands). */
void bighash_tend(loop *lp);

/* An HSET reported CUDIS_R_BIG: convert the hash at the next tend. */
void bighash_note_big(uint8_t pdb, const char *key, uint32_t klen);
/* A command's op wrote a key (it may have replaced or deleted a head). */
void bighash_note_write(uint8_t pdb, const char *key, uint32_t klen);
/* The engine removed a key on its own (a head, or a chunk: db | BH_HIDDEN). */
void bighash_note_event(uint8_t db, const char *key, uint32_t klen);
void bighash_note_lost(void); /* events were lost: every hash is looked at */
/* FLUSHDB of engine database pdb (-1: FLUSHALL) flushed its chunks too. */
void bighash_flushed(int pdb);

/* Command `kind` (argv as the command's) on a big hash: answered, true;
 * false when argv[1] is not one (the caller takes the one-item path). */
bool bighash_cmd(conn *c, int kind, int argc, char **argv, uint32_t *lens);
/* The whole big hash in `out` as one encoded hash (cudis_hash.h): 1; 0
 * when the key is not a big hash; a CUDIS_E_* status when it failed. */
int bighash_whole(conn *c, const char *key, uint32_t klen, sbuf *out);
/* MEMORY USAGE of a big hash (head and chunks, each counted as
 * memory_item_bytes): 0 when key is no big hash, 1 with *bytes, or a
 * negative CUDIS_E_* (alone, as bighash_whole). */
int bighash_memory(conn *c, const char *key, uint32_t klen, long long *bytes);
/* SORT's *->field of a big hash: 1 with the value appended to out, 0
 * when the key is no big hash or has no such field, or a CUDIS_E_*. */
int bighash_field(conn *c, const char *key, uint32_t klen, const char *f, uint32_t flen, sbuf *out);
/* The fields of the big hash whose head's value is hv (hn bytes, as a GET
 * returned it), read with batcher b (engine database pdb | BH_HIDDEN),
 * as one encoded hash in out: false when hv is no head or a read failed.
 * Runs b at once: the caller holds the engine as batch_exec wants it. */
typedef struct batcher batcher;
bool bighash_gather(batcher *b, uint8_t pdb, const char *key, uint32_t klen, const uint8_t *hv,
                    uint32_t hn, sbuf *out);
/* A big hash made one item again (DUMP, RENAME, COPY, MOVE then treat it
 * as any hash); nothing when the key is not one. */
void bighash_unchunk(conn *c, const char *key, uint32_t klen);

#endif /* BIGHASH_H */
