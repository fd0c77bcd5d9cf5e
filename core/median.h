/* The median of a set of timings: auto-probe's pick (spmv/auto.c) and the
 * bench tool's figures use the same rule. */
#ifndef KR_CORE_MEDIAN_H
#define KR_CORE_MEDIAN_H

/* Sorts t[0..n) and returns its median and minimum (n >= 1). */
void kr_median_min(double *t, int n, double *median, double *min);

#endif
