/*
 * standalone.c -- runs a fuzz target without libFuzzer: once on each file
 * named on the command line (or each file in a directory named), as
 * libFuzzer does when given files.  Exit 0 when every input was parsed
 * without a crash; a sanitizer or an abort ends the run as it would under
 * libFuzzer; no input at all is a failure, not a pass.
 */
#include <dirent.h>
#include <sys/stat.h>

#include "fuzz_util.h"

static int run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        return 1;
    }
    uint8_t *buf = NULL;
    size_t len = 0, cap = 0;
    for (;;) {
        if (len == cap) {
            cap = cap ? cap * 2 : 65536;
            uint8_t *nb = realloc(buf, cap);
            if (!nb)
                abort();
            buf = nb;
        }
        size_t n = fread(buf + len, 1, cap - len, f);
        if (n == 0)
            break;
        len += n;
    }
    fclose(f);
    LLVMFuzzerTestOneInput(buf, len);
    free(buf);
    return 0;
}

int main(int argc, char **argv)
{
    int bad = 0, runs = 0;
    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st)) {
            perror(argv[i]);
            return 1;
        }
        if (!S_ISDIR(st.st_mode)) {
            bad |= run_file(argv[i]);
            runs++;
            continue;
        }
        DIR *d = opendir(argv[i]);
        for (struct dirent *e; d && (e = readdir(d));) {
            char p[4200];
            if (e->d_name[0] == '.')
                continue;
            snprintf(p, sizeof p, "%s/%s", argv[i], e->d_name);
            bad |= run_file(p);
            runs++;
        }
        if (d)
            closedir(d);
    }
    printf("%s: %d inputs run\n", argv[0], runs);
    if (!runs) {
        fprintf(stderr, "%s: no inputs: nothing was replayed\n", argv[0]);
        return 1;
    }
    return bad;
}
