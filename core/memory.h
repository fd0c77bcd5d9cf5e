/* Host memory checks before large allocations whose size comes from the
 * user (a generator spec, a file's size line, a matrix): Linux grants
 * such a malloc and then kills the process when the pages are touched, so
 * the size is compared with the memory available first and refused with
 * both numbers. */
#ifndef KR_CORE_MEMORY_H
#define KR_CORE_MEMORY_H

#include "krylov.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Allocations below this many bytes are not checked (reading
 * /proc/meminfo costs more than they could harm). */
#define KR_MEM_CHECK_MIN ((double)(64 << 20))

/* Bytes this process may still take: MemAvailable of /proc/meminfo (else
 * the physical memory), lowered to $KRYLOV_MEMORY_LIMIT (bytes, optional
 * suffix K, M or G) when that is set; 0 when unknown. */
double kr_host_available_bytes(void);

/* KR_ERR_NOMEM with "WHAT needs X GB, but only Y GB of memory is available"
 * when `bytes` exceeds kr_host_available_bytes(); KR_OK otherwise, and for
 * sizes below KR_MEM_CHECK_MIN. */
kr_status kr_host_mem_check(kr_ctx *ctx, double bytes, const char *what);

/* Bytes of a host CSR with n rows and nnz entries. */
static inline double kr_csr_bytes(double n, double nnz)
{
    return 4.0 * (n + 1.0) + 12.0 * nnz;
}

#ifdef __cplusplus
}
#endif

#endif
