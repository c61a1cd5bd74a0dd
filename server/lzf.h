/*
 * lzf.h - LZF (Marc Lehmann's liblzf format, which Redis uses for the
 * strings of dump.rdb files and DUMP payloads when rdbcompression is yes).
 */
#ifndef CUDIS_LZF_H
#define CUDIS_LZF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Compress n bytes of in into out (cap bytes); returns the compressed
 * size, or 0 when it would not fit in cap (the caller keeps the string
 * raw). Any LZF reader decodes it; the bytes need not equal liblzf's. */
size_t lzf_compress(const uint8_t *in, size_t n, uint8_t *out, size_t cap);

/* Decompress n bytes of in into exactly cap bytes of out: false on a bad
 * stream or one that does not fill cap. */
bool lzf_decompress(const uint8_t *in, size_t n, uint8_t *out, size_t cap);

#endif /* CUDIS_LZF_H */
