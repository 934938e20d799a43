// Every C declaration Trawl needs from libcurl, plus typed wrappers for its variadic calls.
//
// Why this file exists: Swift cannot call C variadic functions, and curl_easy_setopt,
// curl_easy_getinfo, curl_multi_setopt and curl_share_setopt are all variadic. Each wrapper below
// is a straight pass-through for one argument kind, so the Swift side keeps its type checking.
// They can go away only if libcurl ever grows non-variadic typed setters.
//
// The header is included by name (never by absolute path): Debian keeps curl's headers under
// /usr/include/x86_64-linux-gnu/curl, which pkg-config adds to the search path.
#ifndef TRAWL_CURL_SHIM_H
#define TRAWL_CURL_SHIM_H

#include <curl/curl.h>
#include <dlfcn.h>
#include <signal.h>
#include <stdint.h>

// MARK: - curl_easy_setopt, one wrapper per argument kind

// long-valued options (flags, timeouts, enum values).
static inline CURLcode trawl_curl_easy_setopt_long(CURL *handle, CURLoption option, long value) {
    return curl_easy_setopt(handle, option, value);
}

// curl_off_t-valued options (sizes past 2 GB: *_LARGE).
static inline CURLcode trawl_curl_easy_setopt_off_t(CURL *handle, CURLoption option, curl_off_t value) {
    return curl_easy_setopt(handle, option, value);
}

// string options (libcurl copies the string since 7.17, so the caller's buffer may go away).
static inline CURLcode trawl_curl_easy_setopt_string(CURL *handle, CURLoption option, const char *value) {
    return curl_easy_setopt(handle, option, value);
}

// opaque pointer options (CURLOPT_PRIVATE, *DATA, ERRORBUFFER); the caller keeps the memory alive.
static inline CURLcode trawl_curl_easy_setopt_pointer(CURL *handle, CURLoption option, void *value) {
    return curl_easy_setopt(handle, option, value);
}

// header lists (CURLOPT_HTTPHEADER); libcurl does not copy the list: free it after the transfer.
static inline CURLcode trawl_curl_easy_setopt_slist(CURL *handle, CURLoption option, struct curl_slist *value) {
    return curl_easy_setopt(handle, option, value);
}

// Callback options. A C function pointer of the exact prototype per kind, so Swift can pass a
// global function without casts.
typedef size_t (*trawl_curl_data_callback)(char *buffer, size_t size, size_t nitems, void *userdata);
typedef int (*trawl_curl_xferinfo_callback)(void *userdata, curl_off_t dltotal, curl_off_t dlnow,
                                            curl_off_t ultotal, curl_off_t ulnow);

// CURLOPT_WRITEFUNCTION, CURLOPT_HEADERFUNCTION and CURLOPT_READFUNCTION share one prototype.
static inline CURLcode trawl_curl_easy_setopt_data_callback(CURL *handle, CURLoption option,
                                                            trawl_curl_data_callback callback) {
    return curl_easy_setopt(handle, option, callback);
}

// CURLOPT_XFERINFOFUNCTION.
static inline CURLcode trawl_curl_easy_setopt_xferinfo_callback(CURL *handle, CURLoption option,
                                                                trawl_curl_xferinfo_callback callback) {
    return curl_easy_setopt(handle, option, callback);
}

// MARK: - curl_easy_getinfo, one wrapper per result kind

static inline CURLcode trawl_curl_easy_getinfo_long(CURL *handle, CURLINFO info, long *value) {
    return curl_easy_getinfo(handle, info, value);
}

static inline CURLcode trawl_curl_easy_getinfo_off_t(CURL *handle, CURLINFO info, curl_off_t *value) {
    return curl_easy_getinfo(handle, info, value);
}

// The returned string belongs to the handle and lives until the handle is reset or cleaned up.
static inline CURLcode trawl_curl_easy_getinfo_string(CURL *handle, CURLINFO info, char **value) {
    return curl_easy_getinfo(handle, info, value);
}

// CURLINFO_PRIVATE.
static inline CURLcode trawl_curl_easy_getinfo_pointer(CURL *handle, CURLINFO info, void **value) {
    return curl_easy_getinfo(handle, info, value);
}

// What every finished response reports (version, peer, timings), read in one call: eight separate
// getinfo calls through Swift showed up in profiles of small requests. `ip` belongs to the handle.
typedef struct {
    long http_version;
    long port;
    curl_off_t dns, connect, tls, first_byte, total;
    const char *ip;
} trawl_transfer_info;

static inline void trawl_curl_transfer_info(CURL *handle, int with_total, trawl_transfer_info *info) {
    char *ip = NULL;
    info->http_version = 0;
    info->port = 0;
    info->dns = info->connect = info->tls = info->first_byte = info->total = 0;
    curl_easy_getinfo(handle, CURLINFO_HTTP_VERSION, &info->http_version);
    curl_easy_getinfo(handle, CURLINFO_PRIMARY_IP, &ip);
    curl_easy_getinfo(handle, CURLINFO_PRIMARY_PORT, &info->port);
    curl_easy_getinfo(handle, CURLINFO_NAMELOOKUP_TIME_T, &info->dns);
    curl_easy_getinfo(handle, CURLINFO_CONNECT_TIME_T, &info->connect);
    curl_easy_getinfo(handle, CURLINFO_APPCONNECT_TIME_T, &info->tls);
    curl_easy_getinfo(handle, CURLINFO_STARTTRANSFER_TIME_T, &info->first_byte);
    if (with_total) curl_easy_getinfo(handle, CURLINFO_TOTAL_TIME_T, &info->total);
    info->ip = ip;
}

// MARK: - curl_multi_setopt and curl_share_setopt

static inline CURLMcode trawl_curl_multi_setopt_long(CURLM *multi, CURLMoption option, long value) {
    return curl_multi_setopt(multi, option, value);
}

// curl_share_setopt takes a lock-data kind (CURL_LOCK_DATA_*) for CURLSHOPT_SHARE/UNSHARE.
static inline CURLSHcode trawl_curl_share_setopt_long(CURLSH *share, CURLSHoption option, long value) {
    return curl_share_setopt(share, option, value);
}

// MARK: - macros that do not import into Swift

// CURLVERSION_NOW is a macro alias of an enum value and does not import.
static inline curl_version_info_data *trawl_curl_version_info(void) {
    return curl_version_info(CURLVERSION_NOW);
}

// Function-like and composite macros that the Swift importer skips.
static const long TRAWL_CURL_ERROR_SIZE = CURL_ERROR_SIZE;
static const long TRAWL_CURL_WRITEFUNC_PAUSE = CURL_WRITEFUNC_PAUSE;
static const long TRAWL_CURL_READFUNC_PAUSE = CURL_READFUNC_PAUSE;
static const long TRAWL_CURL_READFUNC_ABORT = CURL_READFUNC_ABORT;
static const int TRAWL_CURLPAUSE_RECV = CURLPAUSE_RECV;
static const int TRAWL_CURLPAUSE_SEND = CURLPAUSE_SEND;
static const int TRAWL_CURLPAUSE_CONT = CURLPAUSE_CONT;

// SIG_IGN is a cast macro; Swift cannot spell it.
static inline void trawl_ignore_sigpipe(void) {
    signal(SIGPIPE, SIG_IGN);
}

// OpenSSL 3 frees its global state from an atexit handler (OPENSSL_cleanup) unless told not to. The engine's loop
// threads may still be closing connections (SSL_free, X509_STORE_free) while the process exits, and the two frees
// raced: `trawl get` with SSL_CERT_DIR crashed in the allocator at exit. The OS reclaims that memory anyway, so this
// asks OpenSSL, before libcurl initialises it, not to register the handler. Looked up at run time: libcurl brings
// libcrypto in (no link or header dependency here), and another TLS backend simply has no such symbol.
// Returns 1 when OpenSSL accepted, 0 when it is absent or refused.
static inline int trawl_tls_keep_state_at_exit(void) {
    typedef int (*trawl_openssl_init)(uint64_t, const void *);
    trawl_openssl_init init = (trawl_openssl_init)dlsym(RTLD_DEFAULT, "OPENSSL_init_crypto");
    if (init == NULL) return 0;
    return init(0x00080000ULL /* OPENSSL_INIT_NO_ATEXIT, OpenSSL >= 1.1.1b */, NULL) == 1 ? 1 : 0;
}

#endif
