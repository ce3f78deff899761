/*
 * interpose_only.c -- a program of the interposer alone
 * (bench/interpose/sync_latency.c, cut_journal.c and file_calls.c), linked with libc and
 * nothing else: no engine's library asks for the file calls here, so
 * what it exports comes from the dynamic list (and what the linker does
 * with libc's own names), not from what an engine happened to import.
 * tests/bench/interpose_test.sh reads its dynamic symbols.
 */
int main(void) { return 0; }
