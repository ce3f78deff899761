/*
 * refuse_rwf_dsync.c -- a kernel that refuses RWF_DSYNC, for the bench
 * suites: loaded with LD_PRELOAD, it fails every pwritev2(2) that carries
 * the flag with EOPNOTSUPP, as the kernel answers a flag it does not know
 * (pwritev2(2), "ERRORS"), and passes every other call to the C library.
 */
#include <dlfcn.h>
#include <errno.h>
#include <sys/uio.h>

typedef ssize_t (*pwritev2_fn)(int, const struct iovec *, int, off_t, int);

static pwritev2_fn real_pwritev2;

__attribute__((constructor)) static void find_real(void)
{
    real_pwritev2 = (pwritev2_fn)dlsym(RTLD_NEXT, "pwritev2");
}

ssize_t pwritev2(int fd, const struct iovec *iov, int cnt, off_t off, int flags)
{
    if ((flags & RWF_DSYNC) || !real_pwritev2) {
        errno = EOPNOTSUPP;
        return -1;
    }
    return real_pwritev2(fd, iov, cnt, off, flags);
}

ssize_t pwritev64v2(int fd, const struct iovec *iov, int cnt, off_t off, int flags)
{
    return pwritev2(fd, iov, cnt, off, flags);
}
