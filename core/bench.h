/* Benchmark helpers shared inside the library. */
#ifndef KR_CORE_BENCH_H
#define KR_CORE_BENCH_H

/* Sorts t[0..n) and returns its median and minimum (n >= 1). */
void kr_median_min(double *t, int n, double *median, double *min);

#endif
