/* cudis_err.c - text for the cudis error codes (see cudis_err.h). */
#include "cudis_err.h"

const char *cudis_strerror(int err)
{
    switch (err) {
    case CUDIS_OK: return "ok";
    case CUDIS_E_NOMEM: return "out of memory (allocation failed)";
    case CUDIS_E_INVAL: return "invalid argument";
    case CUDIS_E_KEYTOOBIG: return "key too large";
    case CUDIS_E_VALTOOBIG: return "value too large";
    case CUDIS_E_EMPTYKEY: return "empty key not allowed";
    case CUDIS_E_FULL: return "out of memory that eviction cannot fix";
    case CUDIS_E_NOTINT: return "value is not an integer or out of range";
    case CUDIS_E_OVERFLOW: return "increment or decrement would overflow";
    case CUDIS_E_OUTBUF: return "result buffer too small";
    case CUDIS_E_CUDA: return "CUDA error";
    case CUDIS_E_NODEV: return "no usable CUDA device";
    case CUDIS_E_UNSUPPORTED: return "operation not supported by this engine";
    case CUDIS_E_NOENGINE: return "unknown engine";
    case CUDIS_E_IO: return "I/O error";
    case CUDIS_E_TIMEOUT: return "timed out";
    case CUDIS_E_PROTO: return "protocol error";
    case CUDIS_E_BUSY: return "busy";
    case CUDIS_E_DEVFAIL: return "device failed";
    case CUDIS_E_NOFIT: return "item larger than the memory budget";
    case CUDIS_E_WRONGTYPE: return "the key holds another type";
    case CUDIS_E_NAN: return "the resulting score is not a number";
    default: return "unknown error";
    }
}
