/*
 * cudis_err.h - the error codes every cudis module returns.
 *
 * Functions return 0 (CUDIS_OK) or one of the negative codes below;
 * constructors return NULL and explain in a caller-supplied buffer.
 * cudis_strerror() gives a short English text for logs; the server maps codes
 * to Redis's own reply wording itself.
 */
#ifndef CUDIS_ERR_H
#define CUDIS_ERR_H

enum cudis_err {
    CUDIS_OK = 0,
    CUDIS_E_NOMEM = -1,        /* a host or device allocation failed */
    CUDIS_E_INVAL = -2,        /* malformed argument (bad op code, flags...) */
    CUDIS_E_KEYTOOBIG = -3,    /* key longer than the configured maximum */
    CUDIS_E_VALTOOBIG = -4,    /* value (or its result after APPEND/SETRANGE) too long */
    CUDIS_E_EMPTYKEY = -5,     /* empty key while the store disallows it */
    CUDIS_E_FULL = -6,         /* out of memory that eviction cannot fix */
    CUDIS_E_NOTINT = -7,       /* INCRBY on a value that is not a decimal int64 */
    CUDIS_E_OVERFLOW = -8,     /* INCRBY result would overflow int64 */
    CUDIS_E_OUTBUF = -9,       /* result value did not fit the batch's out buffer; op not applied */
    CUDIS_E_CUDA = -10,        /* a CUDA runtime call failed */
    CUDIS_E_NODEV = -11,       /* no usable CUDA device */
    CUDIS_E_UNSUPPORTED = -12, /* the store does not implement this operation */
    CUDIS_E_NOENGINE = -13,    /* unknown engine name */
    CUDIS_E_IO = -14,          /* I/O or network error */
    CUDIS_E_TIMEOUT = -15,     /* timed out */
    CUDIS_E_PROTO = -16,       /* protocol error from a peer */
    CUDIS_E_BUSY = -17,        /* resource busy, retry later */
    CUDIS_E_DEVFAIL = -18,     /* the device failed (fault, hung kernel): the engine is unusable */
    CUDIS_E_NOFIT = -19,       /* the item is bigger than all the store's memory for items */
    CUDIS_E_WRONGTYPE = -20,   /* the key holds another type than the op works on */
    CUDIS_E_NAN = -21,         /* an increment of a score made a NaN */
};

/* Short English text for an error code; never NULL. */
const char *cudis_strerror(int err);

#endif /* CUDIS_ERR_H */
