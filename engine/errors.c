/*
 * errors.c -- names for every error code and option value of the public
 * API.  Engine codes live in the reserved range CL_ERR_LAST..CL_ERR_FIRST;
 * anything else negative is -errno.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "commitlab.h"
#include "engine_internal.h"
#include "wal.h"

/* The last cl_open's or cl_inspect's detail, per thread (cl_error_detail). */
static __thread char detail[512];

const char *cl_error_detail(void) { return detail; }

void cl_detail_clear(void) { detail[0] = 0; }

void cl_detail_set(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(detail, sizeof detail, fmt, ap);
    va_end(ap);
}

const char *cl_strerror(int err)
{
    switch (err) {
    case 0: return "success";
    case CL_ENOTFOUND: return "key not found";
    case CL_ECORRUPT: return "corruption: a checksum or structural check failed";
    case CL_EBROKEN: return "database is broken by an earlier failed log write or sync; reopen to recover";
    case CL_EINVAL: return "invalid argument";
    case CL_ETOOBIG: return "key or value too large (keys up to 512 bytes, values up to 4096 bytes)";
    case CL_EBUSY: return "busy: the database is in use by another handle or process, or this thread holds "
                          "the writer lock through another write transaction";
    case CL_EFORMAT: return "not a commitlab database, or an unsupported format version";
    case CL_ENOTSUP: return "not supported: the option or policy is not built or not available here";
    case CL_EREADONLY: return "write on a read-only transaction or database";
    case CL_ENOMEM: return "out of memory";
    case CL_ETXNDONE: return "transaction already committed or aborted";
    case CL_EINTERNAL: return "internal error: a consistency check failed (a bug in commitlab)";
    case CL_EFILETYPE: return "not a regular file: a symbolic link, FIFO, device, socket or directory where a "
                              "database file should be";
    case CL_EFORK: return "the handle was opened by the parent of this process (fork): it may be used only in "
                          "the process that opened it";
    default: break;
    }
    if (err < 0 && err > -4096)
        return strerror(-err);
    return "unknown error";
}


/* The policies' names and durability are their tables' (wal/policy.c). */
const char *cl_sync_policy_name(enum cl_sync_policy p)
{
    const struct wal_policy *pol = wal_policy_for(p);
    return pol ? pol->name : "?";
}

int cl_sync_policy_is_durable(enum cl_sync_policy p)
{
    const struct wal_policy *pol = wal_policy_for(p);
    return pol ? pol->durable : -1;
}

const char *cl_sync_method_name(enum cl_sync_method m)
{
    return (unsigned)m <= CL_METHOD_RWF_DSYNC ? cl_method_names[m] : "?";
}

int cl_sync_policy_parse(const char *s, enum cl_sync_policy *out)
{
    for (int i = 0; i < CL_SYNC_NPOLICIES; i++)
        if (strcmp(s, cl_sync_policy_name((enum cl_sync_policy)i)) == 0) {
            *out = (enum cl_sync_policy)i;
            return 0;
        }
    return CL_EINVAL;
}

int cl_sync_method_parse(const char *s, enum cl_sync_method *out)
{
    for (unsigned i = 0; cl_method_names[i]; i++)
        if (strcmp(s, cl_method_names[i]) == 0) {
            *out = (enum cl_sync_method)i;
            return 0;
        }
    return CL_EINVAL;
}
