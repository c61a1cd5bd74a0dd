/*
 * crc64.h - the CRC-64 of RDB files and DUMP payloads (Jones polynomial,
 * reflected, initial value 0, no final xor: Redis's crc64).
 */
#ifndef CUDIS_CRC64_H
#define CUDIS_CRC64_H

#include <stddef.h>
#include <stdint.h>

/* The CRC of p[0..n) continued from crc (0 to start). */
uint64_t rdb_crc64(uint64_t crc, const void *p, size_t n);

/* The same by slicing-by-8 tables only (the reference the folded
 * carry-less-multiply path is tested against, and the fallback). */
uint64_t rdb_crc64_table(uint64_t crc, const void *p, size_t n);

#endif
