/*
 * fuzz_rdb.c - the RDB loader (server/rdb.c's rdb_load_fd and the
 * object readers it shares with RESTORE, cmd_dump.c): the input is a whole
 * dump.rdb. The server is made once as fuzz_dispatch's (engine "cpu",
 * 4 MB, one loop); each input is loaded through loop 0's batcher, then the
 * engine is flushed. Its last 8 bytes are zeroed first (an RDB's CRC of 0
 * means "not computed"), so the fuzzer's changes reach the records instead
 * of failing the checksum. Function libraries (FUNCTION2 records) are
 * refused here: their Lua is not what this target explores. Checked: no
 * sanitizer report, no leak, an error or a load for every input. The input
 * also goes through the writer's LZF (server/lzf.c): compressed into the
 * room the writer gives it (n - 4 bytes), what fits must decode back to it.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "lzf.h"
#include "server_internal.h"

static const char FUZZ_CONF[] = "engine cpu\n"
                                "maxmemory 4mb\n"
                                "io-threads 1\n"
                                "engine-pipeline no\n"
                                "loglevel nothing\n";

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    server_state_setup();
    char err[1024];
    if (config_load_text(&srv.cfg, FUZZ_CONF, err, sizeof(err)) != 0) {
        fprintf(stderr, "%s\n", err);
        exit(1);
    }
    log_setup();
    cmd_table_setup();
    if (server_engine_setup() != 0) {
        exit(1);
    }
    server_loops_setup();
    return 0;
}

/* lzf_compress into exactly n - 4 bytes, then back. */
static void lzf_round_trip(const uint8_t *data, size_t size)
{
    if (size <= 4) {
        return;
    }
    uint8_t *c = malloc(size - 4), *d = malloc(size);
    if (c == NULL || d == NULL) {
        free(c);
        free(d);
        return;
    }
    size_t k = lzf_compress(data, size, c, size - 4);
    if (k > size - 4 || (k > 0 && (!lzf_decompress(c, k, d, size) || memcmp(d, data, size)))) {
        fprintf(stderr, "fuzz_rdb: LZF did not round-trip %zu bytes (%zu compressed)\n", size, k);
        abort();
    }
    free(c);
    free(d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    lzf_round_trip(data, size);
    uint8_t *img = malloc(size ? size : 1);
    if (img == NULL) {
        return 0;
    }
    memcpy(img, data, size);
    if (size >= 17) {
        memset(img + size - 8, 0, 8);
    }
    /* the loader reads a file: the input is written to a memory file and
     * read through a window of 64 B to 8 KB (by the input's size), so
     * records cross the window's end and outgrow it */
    static int fd = -1;
    if (fd < 0) {
        fd = memfd_create("fuzz_rdb", MFD_CLOEXEC);
        if (fd < 0) {
            perror("fuzz_rdb: memfd_create");
            abort();
        }
    }
    if (ftruncate(fd, 0) != 0 || pwrite(fd, img, size, 0) != (ssize_t)size ||
        lseek(fd, 0, SEEK_SET) != 0) {
        perror("fuzz_rdb: the memory file");
        abort();
    }
    rdb_load_stats st;
    char err[256] = "";
    int rc = rdb_load_fd(&srv.loops[0], fd, size, (size_t)64 << (size % 8), false, &st, err,
                         sizeof(err));
    if (rc != 0 && err[0] == '\0') {
        fprintf(stderr, "fuzz_rdb: a failed load without a reason\n");
        abort();
    }
    free(img);
    bighash_tend(&srv.loops[0]); /* hashes past hash-max-item-size become chunks */
    (void)engine_flush(srv.eng, CUDIS_DB_ALL);
    bighash_flushed(-1);
    return 0;
}
