/*
 * sha1.h - SHA-1 (FIPS 180-4) for script names (SCRIPT LOAD, EVALSHA,
 * redis.sha1hex). Not for security.
 */
#ifndef SERVER_SHA1_H
#define SERVER_SHA1_H

#include <stddef.h>
#include <stdint.h>

/* The digest of n bytes as 40 lower-case hex digits and a NUL. */
void sha1_hex(const void *data, size_t n, char out[41]);

#endif /* SERVER_SHA1_H */
