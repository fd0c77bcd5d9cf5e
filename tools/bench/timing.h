/* Timing helpers of the bench tool, on the library's internals (the
 * backend's time_runs: CUDA events on the GPU, a wall clock on the CPU).
 * They were kr_matrix_time_apply and kr_ctx_copy_bandwidth of the public
 * header until the library was kept apart from its benchmarks. */
#ifndef KR_TOOLS_BENCH_TIMING_H
#define KR_TOOLS_BENCH_TIMING_H

#include "krylov.h"

/* Times y = M x: `warmup` untimed applications, then `reps` timed ones.
 * Returns the median and the minimum seconds of one application. */
kr_status bench_time_apply(kr_matrix *M, const kr_vec *x, kr_vec *y, int warmup,
                           int reps, double *median_s, double *min_s);

/* The same for Y = M X with k columns (kr_matrix_apply_multi's
 * arguments, checked as it checks them). */
kr_status bench_time_apply_multi(kr_matrix *M, int32_t k, const kr_vec *X,
                                 kr_vec *Y, int warmup, int reps,
                                 double *median_s, double *min_s);

/* Device-to-device copy of `bytes` bytes, median of `reps` timed copies;
 * bandwidth counts bytes read plus bytes written. */
kr_status bench_time_copy(kr_ctx *ctx, size_t bytes, int reps,
                          double *bytes_per_s);

/* The floor of a setup on the device: one kernel launch (the backend's
 * fill of one element) and one 8-byte download of that element, which
 * waits for the launch; timed together on the host wall clock, `warmup`
 * untimed runs and then the median of `reps`. Fails if the download does
 * not return the value filled. */
kr_status bench_time_setup_floor(kr_ctx *ctx, int warmup, int reps,
                                 double *median_s);

#endif
