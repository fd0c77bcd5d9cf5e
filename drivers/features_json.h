/* The SpMM features of a matrix (kr_csr_spmm_features) as JSON, for
 * `krylov analyze` and `krylov bench spmm`. */
#ifndef KR_DRIVERS_FEATURES_JSON_H
#define KR_DRIVERS_FEATURES_JSON_H

#include "json.h"
#include "krylov.h"

/* "key": {"density": ..., "row_nnz": {"min", "mean", "max"}, ...}; the
 * sizes are left to the caller, who usually has them already. */
void cli_json_spmm_features(cli_json *j, const char *key,
                            const kr_spmm_features *f);

#endif
