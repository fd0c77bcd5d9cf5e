/* The generators' random numbers: splitmix64 streams (a generator keys
 * one stream per row from its seed, so a matrix does not depend on the
 * thread count) and sorted samples of distinct integers. */
#include "data/gen.h"

#include <math.h>
#include <string.h>

uint64_t kr_gen_mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

uint64_t kr_gen_next64(uint64_t *s)
{
    return kr_gen_mix64(*s += 0x9e3779b97f4a7c15ull);
}

/* uniform in [0, m), m < 2^32 (multiply-shift; the bias is < 2^-32) */
int32_t kr_gen_below(uint64_t *s, int32_t m)
{
    return (int32_t)(((kr_gen_next64(s) >> 32) * (uint64_t)m) >> 32);
}

double kr_gen_uniform_pm1(uint64_t *s)
{
    return (double)(kr_gen_next64(s) >> 11) * 0x1.0p-52 - 1.0;
}

/* ------------------------------------------------------ sorted samples */

static void swap_i32(int32_t *a, int32_t *b)
{
    int32_t t = *a;
    *a = *b;
    *b = t;
}

static void insertion_sort(int32_t *a, int32_t n)
{
    for (int32_t i = 1; i < n; i++) {
        int32_t v = a[i], j = i;
        for (; j > 0 && a[j - 1] > v; j--)
            a[j] = a[j - 1];
        a[j] = v;
    }
}

/* Quicksort: median of three moved to a[0], Hoare partition (which then
 * splits into two non-empty parts), recursion on the smaller part only. */
static void sort_i32(int32_t *a, int32_t n)
{
    while (n > 24) {
        int32_t m = n / 2;
        if (a[m] < a[0]) swap_i32(&a[m], &a[0]);
        if (a[n - 1] < a[0]) swap_i32(&a[n - 1], &a[0]);
        if (a[n - 1] < a[m]) swap_i32(&a[n - 1], &a[m]);
        swap_i32(&a[0], &a[m]);
        int32_t p = a[0], i = -1, j = n;
        for (;;) {
            do
                i++;
            while (a[i] < p);
            do
                j--;
            while (a[j] > p);
            if (i >= j) break;
            swap_i32(&a[i], &a[j]);
        }
        int32_t left = j + 1;
        if (left < n - left) {
            sort_i32(a, left);
            a += left;
            n -= left;
        } else {
            sort_i32(a + left, n - left);
            n = left;
        }
    }
    insertion_sort(a, n);
}

/* Removes repeats from sorted a[0..n-1]; returns the new length. */
static int32_t unique_i32(int32_t *a, int32_t n)
{
    int32_t u = n > 0;
    for (int32_t t = 1; t < n; t++)
        if (a[t] != a[u - 1]) a[u++] = a[t];
    return u;
}

/* k distinct sorted values from [0, m). Dense requests (4k > m) use
 * selection sampling (Knuth's algorithm S, O(m) <= O(4k)); sparse ones draw,
 * sort and drop repeats, then redraw the missing, which converges fast
 * because at most a quarter of [0, m) is taken. Both give every k-subset
 * the same probability. */
void kr_gen_sample_sorted(uint64_t *s, int32_t k, int32_t m, int32_t *out)
{
    if ((int64_t)k * 4 > m) {
        int32_t got = 0;
        for (int32_t t = 0; t < m && got < k; t++)
            if ((double)(m - t) * (double)(kr_gen_next64(s) >> 11) * 0x1.0p-53 <
                (double)(k - got))
                out[got++] = t;
        return;
    }
    int32_t got = 0;
    while (got < k) {
        for (int32_t t = got; t < k; t++)
            out[t] = kr_gen_below(s, m);
        sort_i32(out, k);
        got = unique_i32(out, k);
    }
}

int32_t kr_gen_sample_with(uint64_t *s, int32_t k, int32_t m, int32_t self,
                           int32_t *out)
{
    int32_t p = 0;
    kr_gen_sample_sorted(s, k, m - 1, out);
    for (int32_t t = 0; t < k; t++)
        out[t] += out[t] >= self; /* skip self */
    while (p < k && out[p] < self)
        p++;
    memmove(out + p + 1, out + p, sizeof *out * (size_t)(k - p));
    out[p] = self;
    return p;
}

void kr_gen_dominant_values(uint64_t *s, int32_t len, int32_t diag, double *val)
{
    double off = 0;
    for (int32_t t = 0; t < len; t++) {
        if (t == diag) continue;
        val[t] = kr_gen_uniform_pm1(s);
        off += fabs(val[t]);
    }
    val[diag] = 1.0 + off;
}
