// The libcurl floor: one thread re-adding 64 reused easy handles to a multi handle, no parsing, no
// Swift. Reports requests/s and CPU per request. Usage: curl_multi_floor URL TOTAL [engine]
// FLOOR_CONC=N sets how many are in flight (1 to 64, default 64).
// With "engine", each handle also gets the options Trawl's engine sets (TransferSetup.swift: protocols, timeouts,
// Accept-Encoding, buffer size, error buffer, its default headers), and the URL is set again before each
// transfer as the engine does: what those options cost libcurl, without any Swift.
// It waits with curl_multi_wait: this loop (add handles, then wait) with curl_multi_poll ran 2.4x slower at the
// same CPU per request with libcurl 7.88.1 (28k vs 67k requests/s here), idle between events, which made an
// earlier "floor" look slower than trawl itself.
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/resource.h>
static size_t wr(char *p, size_t s, size_t n, void *u) { *(size_t*)u += s*n; return s*n; }
static size_t hd(char *p, size_t s, size_t n, void *u) { return s*n; }
int main(int argc, char **argv) {
  const char *url = argv[1]; int total = atoi(argv[2]); int conc = 64; int reset = 0;
  if (getenv("FLOOR_CONC")) { conc = atoi(getenv("FLOOR_CONC")); if (conc < 1 || conc > 64) conc = 64; }
  int engine = argc > 3 && strcmp(argv[3], "engine") == 0;
  static char errbuf[64][CURL_ERROR_SIZE];
  curl_global_init(CURL_GLOBAL_DEFAULT);
  CURLM *m = curl_multi_init();
  curl_multi_setopt(m, CURLMOPT_MAXCONNECTS, 64L);
  size_t bytes = 0; int started = 0, done = 0;
  struct curl_slist *h = curl_slist_append(NULL, engine ? "User-Agent: trawl/0.1" : "User-Agent: x");
  CURL *e[64];
  for (int i = 0; i < conc; i++) { e[i] = curl_easy_init(); }
  struct timespec t0, t1; clock_gettime(CLOCK_MONOTONIC, &t0);
  for (int i = 0; i < conc && started < total; i++, started++) {
    curl_easy_setopt(e[i], CURLOPT_URL, url); curl_easy_setopt(e[i], CURLOPT_WRITEFUNCTION, wr);
    curl_easy_setopt(e[i], CURLOPT_WRITEDATA, &bytes); curl_easy_setopt(e[i], CURLOPT_HEADERFUNCTION, hd);
    curl_easy_setopt(e[i], CURLOPT_HTTPHEADER, h); curl_easy_setopt(e[i], CURLOPT_NOSIGNAL, 1L);
    if (engine) {
      curl_easy_setopt(e[i], CURLOPT_PROTOCOLS_STR, "http,https"); curl_easy_setopt(e[i], CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
      curl_easy_setopt(e[i], CURLOPT_SUPPRESS_CONNECT_HEADERS, 1L); curl_easy_setopt(e[i], CURLOPT_HTTP_CONTENT_DECODING, 0L);
      curl_easy_setopt(e[i], CURLOPT_PROXY, ""); curl_easy_setopt(e[i], CURLOPT_NOPROXY, "");
      curl_easy_setopt(e[i], CURLOPT_HTTP_VERSION, CURL_HTTP_VERSION_1_1); curl_easy_setopt(e[i], CURLOPT_ERRORBUFFER, errbuf[i]);
      curl_easy_setopt(e[i], CURLOPT_BUFFERSIZE, 16384L); curl_easy_setopt(e[i], CURLOPT_ACCEPT_ENCODING, "gzip, deflate");
      curl_easy_setopt(e[i], CURLOPT_CONNECTTIMEOUT_MS, 10000L); curl_easy_setopt(e[i], CURLOPT_HTTPGET, 1L);
    }
    curl_multi_add_handle(m, e[i]);
  }
  while (done < total) {
    int running; curl_multi_perform(m, &running);
    CURLMsg *msg; int left;
    while ((msg = curl_multi_info_read(m, &left))) {
      if (msg->msg != CURLMSG_DONE) continue;
      CURL *x = msg->easy_handle; done++;
      long code; curl_easy_getinfo(x, CURLINFO_RESPONSE_CODE, &code);
      curl_multi_remove_handle(m, x);
      if (started < total) {
        if (reset) { curl_easy_reset(x); curl_easy_setopt(x, CURLOPT_URL, url); curl_easy_setopt(x, CURLOPT_WRITEFUNCTION, wr);
          curl_easy_setopt(x, CURLOPT_WRITEDATA, &bytes); curl_easy_setopt(x, CURLOPT_HEADERFUNCTION, hd);
          curl_easy_setopt(x, CURLOPT_HTTPHEADER, h); curl_easy_setopt(x, CURLOPT_NOSIGNAL, 1L); }
        if (engine) curl_easy_setopt(x, CURLOPT_URL, url);
        curl_multi_add_handle(m, x); started++; }
    }
    curl_multi_wait(m, NULL, 0, 1000, NULL);
  }
  clock_gettime(CLOCK_MONOTONIC, &t1);
  double secs = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
  struct rusage ru; getrusage(RUSAGE_SELF, &ru);
  double cpu = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec/1e6 + ru.ru_stime.tv_sec + ru.ru_stime.tv_usec/1e6;
  printf("%d req in %.2fs: %.0f req/s, %.1f us cpu/req\n", total, secs, total/secs, cpu*1e6/total);
}
