/*
 * replay.c - the main of a fuzz target where libFuzzer is not linked (gcc
 * builds, the ASan tree): runs LLVMFuzzerTestOneInput once over each file
 * named, and over each file of each folder named (in name order), as
 * libFuzzer does for "-runs=0 <folder>". Arguments starting with '-' are
 * libFuzzer's flags and are ignored. Each input is passed in a buffer of
 * exactly its size, so ASan sees a read past its end. A failing input
 * aborts (an assert or a sanitizer report); the name is printed first.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));

static int run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        perror(path);
        return -1;
    }
    size_t cap = 4096, len = 0;
    uint8_t *buf = malloc(cap);
    size_t n;
    while (buf != NULL && (n = fread(buf + len, 1, cap - len, f)) > 0) {
        len += n;
        if (len == cap) {
            cap *= 2;
            buf = realloc(buf, cap);
        }
    }
    fclose(f);
    if (buf == NULL) {
        fprintf(stderr, "%s: out of memory\n", path);
        return -1;
    }
    uint8_t *exact = malloc(len ? len : 1);
    memcpy(exact, buf, len);
    free(buf);
    fprintf(stderr, "replay: %s (%zu bytes)\n", path, len);
    LLVMFuzzerTestOneInput(exact, len);
    free(exact);
    return 0;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int run_dir(const char *dir, int *count)
{
    DIR *d = opendir(dir);
    if (d == NULL) {
        perror(dir);
        return -1;
    }
    char **names = NULL;
    size_t n = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.') {
            continue;
        }
        if (n == cap) {
            cap = cap ? cap * 2 : 64;
            names = realloc(names, cap * sizeof(*names));
        }
        size_t len = strlen(dir) + strlen(e->d_name) + 2;
        names[n] = malloc(len);
        snprintf(names[n], len, "%s/%s", dir, e->d_name);
        n++;
    }
    closedir(d);
    if (n > 0) {
        qsort(names, n, sizeof(*names), by_name);
    }
    int rc = 0;
    for (size_t i = 0; i < n; i++) {
        struct stat st;
        if (stat(names[i], &st) == 0 && S_ISREG(st.st_mode)) {
            rc |= run_file(names[i]);
            (*count)++;
        }
        free(names[i]);
    }
    free(names);
    return rc;
}

int main(int argc, char **argv)
{
    if (LLVMFuzzerInitialize != NULL) {
        LLVMFuzzerInitialize(&argc, &argv);
    }
    int rc = 0, count = 0;
    for (int i = 1; i < argc; i++) {
        if (argv[i][0] == '-') {
            continue;
        }
        struct stat st;
        if (stat(argv[i], &st) != 0) {
            perror(argv[i]);
            rc = 1;
        } else if (S_ISDIR(st.st_mode)) {
            rc |= run_dir(argv[i], &count) != 0;
        } else {
            rc |= run_file(argv[i]) != 0;
            count++;
        }
    }
    fprintf(stderr, "replay: %d inputs, %s\n", count, rc ? "some could not be read" : "all ran");
    return rc;
}
