// Every C declaration Trawl needs from yajl 2.1 (the parser, the generator, yajl_version for `trawl --version`),
// plus typed wrappers for its variadic calls.
//
// Why this file exists: yajl_config and yajl_gen_config are variadic, which Swift cannot call.
// Each wrapper is a straight pass-through for one option kind. They can go away if yajl ever
// grows typed setters (2.1.0 is the last release).
//
// pkg-config adds -I/usr/include/yajl, but yajl's own headers include each other as
// <yajl/...>, so we include them the same way.
#ifndef TRAWL_YAJL_SHIM_H
#define TRAWL_YAJL_SHIM_H

#include <yajl/yajl_parse.h>
#include <yajl/yajl_gen.h>
#include <yajl/yajl_version.h>

// yajl_config for boolean options (yajl_allow_comments, yajl_dont_validate_strings,
// yajl_allow_trailing_garbage, yajl_allow_multiple_values, yajl_allow_partial_values).
static inline int trawl_yajl_config_bool(yajl_handle handle, yajl_option option, int enabled) {
    return yajl_config(handle, option, enabled);
}

// yajl_gen_config for boolean options (yajl_gen_beautify, yajl_gen_validate_utf8,
// yajl_gen_escape_solidus).
static inline int trawl_yajl_gen_config_bool(yajl_gen gen, yajl_gen_option option, int enabled) {
    return yajl_gen_config(gen, option, enabled);
}

// yajl_gen_config for yajl_gen_indent_string.
static inline int trawl_yajl_gen_config_string(yajl_gen gen, yajl_gen_option option, const char *value) {
    return yajl_gen_config(gen, option, value);
}

#endif
