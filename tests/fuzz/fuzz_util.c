/* fuzz_util.c -- the fuzz targets' scratch directory (see fuzz_util.h). */
#include "fuzz_util.h"

#include <dirent.h>
#include <fcntl.h>

static char dir[256];

static void remove_dir(void)
{
    DIR *d = opendir(dir);
    if (d) {
        for (struct dirent *e; (e = readdir(d));) {
            char p[600];
            if (e->d_name[0] == '.')
                continue;
            snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
            unlink(p);
        }
        closedir(d);
    }
    rmdir(dir);
}

const char *fuzz_dir(void)
{
    if (!dir[0]) {
        /* tmpfs when there is one: every input writes its files */
        const char *base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
        snprintf(dir, sizeof dir, "%s/commitlab-fuzz-XXXXXX", base);
        if (!mkdtemp(dir)) {
            perror("fuzz: mkdtemp");
            abort();
        }
        atexit(remove_dir);
    }
    return dir;
}

void fuzz_write(const char *name, const uint8_t *buf, size_t len)
{
    char p[600];
    snprintf(p, sizeof p, "%s/%s", fuzz_dir(), name);
    int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0 || (len && write(fd, buf, len) != (ssize_t)len)) {
        perror("fuzz: write");
        abort();
    }
    close(fd);
}

void fuzz_unlink(const char *name)
{
    char p[600];
    snprintf(p, sizeof p, "%s/%s", fuzz_dir(), name);
    unlink(p);
}
