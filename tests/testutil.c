/* testutil.c -- see testutil.h. */
#include "testutil.h"

#include <check.h>

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

char *tu_mkdtemp(const char *tag)
{
    const char *base = getenv("TMPDIR");
    char *p;
    if (!base || !*base)
        base = "/tmp";
    if (asprintf(&p, "%s/commitlab-%s-XXXXXX", base, tag) < 0)
        abort();
    if (!mkdtemp(p)) {
        perror("mkdtemp");
        abort();
    }
    return p;
}

static int rm_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb; (void)flag; (void)ftw;
    return remove(path);
}

void tu_rmdir(const char *path)
{
    if (path)
        nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static uint64_t env_u64(const char *name, uint64_t dflt)
{
    const char *v = getenv(name);
    if (!v || !*v)
        return dflt;
    return strtoull(v, NULL, 0);
}

uint64_t tu_seed(uint64_t dflt) { return env_u64("CL_SEED", dflt); }
int tu_log_insert(uint64_t turn)
{
    const char *e = getenv("CL_LOG_INSERT");
    if (e && strcmp(e, "mutex") == 0)
        return 0;
    if (e && strcmp(e, "slots") == 0)
        return 1;
    if (e && *e) {
        fprintf(stderr, "CL_LOG_INSERT=%s: expected mutex or slots\n", e);
        abort();
    }
    return (int)(turn % 2);
}

uint64_t tu_iterations(uint64_t dflt)
{
    const char *scale = getenv("CL_TEST_SCALE");
    double s = scale && *scale ? strtod(scale, NULL) : 1.0;
    uint64_t n = s > 0 ? (uint64_t)((double)dflt * s + 0.5) : dflt;
    return env_u64("CL_ITERATIONS", n ? n : 1);
}

int tu_read_file(const char *path, uint8_t **buf, size_t *len)
{
    FILE *f = fopen(path, "rb");
    long n;
    if (!f)
        return -errno;
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    fseek(f, 0, SEEK_SET);
    *buf = malloc(n > 0 ? (size_t)n : 1);
    *len = fread(*buf, 1, (size_t)n, f);
    fclose(f);
    return 0;
}

int tu_write_file(const char *path, const uint8_t *buf, size_t len)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return -errno;
    size_t w = fwrite(buf, 1, len, f);
    fclose(f);
    return w == len ? 0 : -EIO;
}

int tu_flip_byte(const char *path, uint64_t off)
{
    int fd = open(path, O_RDWR);
    unsigned char c;
    if (fd < 0)
        return -errno;
    if (pread(fd, &c, 1, (off_t)off) != 1) {
        close(fd);
        return -EIO;
    }
    c ^= 0xff;
    if (pwrite(fd, &c, 1, (off_t)off) != 1) {
        close(fd);
        return -EIO;
    }
    close(fd);
    return 0;
}

int tu_run_suite(Suite *s)
{
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
