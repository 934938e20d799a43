/* Raw yajl with no callbacks: the ceiling for any extraction built on it.
 * Reads FILE in 64 KiB chunks, as the Swift benchmark does, and prints MB/s. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <yajl/yajl_parse.h>

int main(int argc, char **argv) {
    if (argc < 2) { fprintf(stderr, "usage: %s FILE\n", argv[0]); return 2; }
    FILE *file = fopen(argv[1], "rb");
    if (!file) { perror(argv[1]); return 1; }
    static unsigned char buffer[65536];
    struct timespec start, end;
    clock_gettime(CLOCK_MONOTONIC, &start);
    yajl_handle handle = yajl_alloc(NULL, NULL, NULL);
    size_t total = 0, n;
    while ((n = fread(buffer, 1, sizeof buffer, file)) > 0) {
        total += n;
        if (yajl_parse(handle, buffer, n) != yajl_status_ok) { fprintf(stderr, "parse error\n"); return 1; }
    }
    if (yajl_complete_parse(handle) != yajl_status_ok) { fprintf(stderr, "parse error at end\n"); return 1; }
    yajl_free(handle);
    clock_gettime(CLOCK_MONOTONIC, &end);
    double seconds = (end.tv_sec - start.tv_sec) + (end.tv_nsec - start.tv_nsec) / 1e9;
    printf("yajl-raw bytes=%zu seconds=%.3f MB/s=%.1f\n", total, seconds, total / seconds / 1e6);
    fclose(file);
    return 0;
}
