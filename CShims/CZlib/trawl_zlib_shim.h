#ifndef TRAWL_ZLIB_SHIM_H
#define TRAWL_ZLIB_SHIM_H

#include <zlib.h>

// inflateInit2 is a macro (it passes the library's version and the stream's size): Swift cannot call it.
static inline int trawl_inflate_init(z_stream *stream, int window_bits) {
    return inflateInit2(stream, window_bits);
}

#endif
