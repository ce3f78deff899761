/*
 * pg_server.h -- a private PostgreSQL server for one benchmark run, as
 * PostgreSQL's own users start one (initdb, pg_ctl -w start, pg_ctl -m
 * fast stop: https://www.postgresql.org/docs/current/app-pg-ctl.html),
 * owned the way a test owns a loop device: known by the directory it
 * made, stopped on every exit path, and never one it did not start.
 *
 * The binaries: --pg-bindir, else pg_config --bindir when that holds
 * postgres, initdb and pg_ctl, else Debian's /usr/lib/postgresql/N/bin
 * (the highest N).  The cluster: one template per command and WAL
 * segment size, D/postgres.template-NM/data (initdb --wal-segsize),
 * copied to RUN/cluster for each run, which is marked as commitlab's
 * (a file commitlab-cluster naming its socket directory).  The server
 * listens on no address, only on a Unix socket in RUN/cluster (or, when
 * that path is too long for a socket, in a directory of its own under
 * /tmp), and its port only names that socket.  As root, initdb, pg_ctl
 * and postgres run as the postgres account (--pg-user), which owns the
 * cluster directory and nothing else.
 *
 * driver_postgres.c calls start and stop; the command calls
 * bench_postgres_preflight before its first run and bench_postgres_reap
 * on a killed run's leftover directory (driver.h).
 */
#ifndef CL_PG_SERVER_H
#define CL_PG_SERVER_H

#include <stdint.h>
#include <sys/types.h>

#include "commitlab_engine.h"

#define PG_SUPERUSER "commitlab" /* initdb -U: the role the clients connect as */
#define PG_SETTINGS_MAX 4096     /* the "name=value" lines of one configuration */
#define PG_MARK "commitlab-cluster"

struct pg_server {
    char data[4096];    /* the cluster directory, absolute */
    char sockdir[4096]; /* unix_socket_directories */
    int tmp_sockdir;    /* sockdir is a directory of its own under /tmp */
    int port;
    pid_t postmaster; /* 0: not running */
};

/* The WAL segment size cfg asks for, in bytes (16M when not given). */
uint64_t pg_segment_size(const struct cl_engine_config *cfg);
/* Its MiB when initdb --wal-segsize takes it (a power of two, 1 to 1024), else 0. */
unsigned pg_segment_mb(uint64_t bytes);

/* The default binaries' "postgres (PostgreSQL) 15.18 in DIR", or that
 * there are none and how to install them; init once first. */
void pg_server_version_init(void);
const char *pg_server_version(void);

/* Starts a server for cfg in run_dir/cluster, a copy of the template for
 * its segment size (made first if this command has none), with the
 * settings ("name=value" lines) at the end of its postgresql.conf.  0; or
 * -1 with one line in err (the log's last lines), nothing left running. */
int pg_server_start(struct pg_server *s, const struct cl_engine_config *cfg, const char *run_dir, const char *settings,
                    char *err, size_t len);
/* Stops it (pg_ctl -m fast stop; SIGQUIT, then SIGKILL, if that fails)
 * and removes its own socket directory.  Safe to call twice. */
void pg_server_stop(struct pg_server *s);
/* The server's processes' usage: user and system CPU (µs) of the
 * postmaster, its children and the children it has reaped, and the
 * voluntary and involuntary context switches of the postmaster and its
 * running children (a reaped child's switches are not kept anywhere the
 * kernel shows).  0; -1 when the postmaster cannot be read. */
struct pg_usage {
    int64_t user_us, sys_us, nvcsw, nivcsw;
};
int pg_server_usage(const struct pg_server *s, struct pg_usage *u);

#endif
