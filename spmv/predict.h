/* The row-order predictor's tree (issue 19, after Mehrabi et al.): a
 * decision tree over the SpMM features and k, trained on GPU timings by
 * bench/spmm_train.py, which writes spmv/row_order_model.c in this form.
 * The shipped file holds an empty tree until a GPU-trained one replaces
 * it; an empty tree makes `--permute auto` refuse, never guess. */
#ifndef KR_SPMV_PREDICT_H
#define KR_SPMV_PREDICT_H

#include "krylov.h"

#include <stddef.h>
#include <stdint.h>

/* Features in this order: nrows, ncols, nnz, density, then min, mean and
 * max of row_nnz, warp_nnz, warp_imbalance, row_blocks, warp_blocks and
 * neighbour_distance (kr_spmm_features), then k. */
#define KR_PREDICT_NFEATURES 23

typedef struct kr_tree_node {
    int32_t feature;  /* -1 at a leaf */
    double threshold; /* x[feature] <= threshold goes left */
    int32_t left, right;
    const char *format, *order; /* at a leaf: its best choice */
} kr_tree_node;

typedef struct kr_tree_model {
    const char *provenance; /* what it was trained on: device, date, data */
    int32_t nfeatures;
    const char *const *features; /* must equal kr_predict_feature_names() */
    int32_t nformats;
    const char *const *formats;
    int32_t nnodes; /* 0: no trained model */
    const kr_tree_node *nodes;
    /* nnodes x nformats: a leaf's best order when the format is given
     * (NULL where that format was not timed) */
    const char *const *format_orders;
} kr_tree_model;

/* spmv/row_order_model.c */
extern const kr_tree_model kr_row_order_model;

typedef struct kr_prediction {
    const char *format, *order;
    char reason[512]; /* the tree's path to the leaf */
} kr_prediction;

const char *const *kr_predict_feature_names(void);
/* x[KR_PREDICT_NFEATURES] from f and k. */
void kr_predict_features(const kr_spmm_features *f, int32_t k, double *x);
/* KR_OK when the model's features, indices and leaves are well formed. */
kr_status kr_predict_check(kr_ctx *ctx, const kr_tree_model *m);
/* The leaf x reaches; path gets "feature <= t (value) -> ..." steps. */
int32_t kr_predict_leaf(const kr_tree_model *m, const double *x, char *path,
                        size_t len);
/* The choice for A at k columns: the leaf's format and order when format
 * is NULL or "auto", else its best order for that format. KR_ERR_UNSUPPORTED
 * with the message when m has no tree. */
kr_status kr_predict_choice(kr_ctx *ctx, const kr_tree_model *m,
                            const kr_csr *A, int32_t k, const char *format,
                            kr_prediction *out);

#endif
