/*
 * policy.c -- the registry of sync policies: one table per policy (each in
 * its wal/policy_<name>.c; its promise is documented next to it in wal.h),
 * found here by the policy's number.  The list of policies is
 * CL_SYNC_POLICIES in include/commitlab.h; this file, the names, the
 * durability flag the public API reports and the CLI's --sync choices all
 * follow from it.
 *
 * wal_commit() calls policy->commit with the transaction's commit LSN; the
 * policy writes and syncs through wal_write_locked/wal_sync_locked under
 * io_mu, which keep the LSNs, the statistics and the sticky broken state.
 * A policy with a thread or a queue keeps its state in w->policy_state,
 * starts its thread in start() and joins it in stop() (both optional).
 */
#include "wal_internal.h"

static const struct wal_policy *const registry[CL_SYNC_NPOLICIES] = {
#define CL_SYNC_REGISTER_(e, n) [CL_SYNC_##e] = &wal_policy_##n,
    CL_SYNC_POLICIES(CL_SYNC_REGISTER_)
#undef CL_SYNC_REGISTER_
};

const struct wal_policy *wal_policy_for(enum cl_sync_policy p)
{
    return (unsigned)p < CL_SYNC_NPOLICIES ? registry[p] : NULL;
}
