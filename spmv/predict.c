/* Evaluates the row-order tree (spmv/predict.h): the features of A (one
 * pass, kr_csr_spmm_features) and k walk it from the root to a leaf, whose
 * choice and path are the prediction and its reason. */
#include "spmv/predict.h"

#include "core/error.h"

#include <stdio.h>
#include <string.h>

#define NO_MODEL_MESSAGE                                                       \
    "no trained row-order model in this build; train it with "                 \
    "bench/spmm_train.py on GPU timings"

static const char *const feature_names[KR_PREDICT_NFEATURES + 1] = {
    "nrows",
    "ncols",
    "nnz",
    "density",
    "row_nnz.min",
    "row_nnz.mean",
    "row_nnz.max",
    "warp_nnz.min",
    "warp_nnz.mean",
    "warp_nnz.max",
    "warp_imbalance.min",
    "warp_imbalance.mean",
    "warp_imbalance.max",
    "row_blocks.min",
    "row_blocks.mean",
    "row_blocks.max",
    "warp_blocks.min",
    "warp_blocks.mean",
    "warp_blocks.max",
    "neighbour_distance.min",
    "neighbour_distance.mean",
    "neighbour_distance.max",
    "k",
    NULL,
};

const char *const *kr_predict_feature_names(void) { return feature_names; }

static double *put3(double *x, const kr_stat3 *s)
{
    x[0] = s->min;
    x[1] = s->mean;
    x[2] = s->max;
    return x + 3;
}

void kr_predict_features(const kr_spmm_features *f, int32_t k, double *x)
{
    x[0] = f->nrows;
    x[1] = f->ncols;
    x[2] = f->nnz;
    x[3] = f->density;
    double *p = put3(x + 4, &f->row_nnz);
    p = put3(p, &f->warp_nnz);
    p = put3(p, &f->warp_imbalance);
    p = put3(p, &f->row_blocks);
    p = put3(p, &f->warp_blocks);
    p = put3(p, &f->neighbour_distance);
    *p = k;
}

static int bad_node(const kr_tree_model *m, int32_t i)
{
    const kr_tree_node *n = &m->nodes[i];
    if (n->feature < 0) return !n->format || !n->order;
    return n->feature >= KR_PREDICT_NFEATURES || n->left <= i ||
           n->right <= i || n->left >= m->nnodes || n->right >= m->nnodes;
}

kr_status kr_predict_check(kr_ctx *ctx, const kr_tree_model *m)
{
    if (m->nnodes <= 0)
        return kr_fail(ctx, KR_ERR_UNSUPPORTED, NO_MODEL_MESSAGE);
    if (m->nfeatures != KR_PREDICT_NFEATURES)
        return kr_fail(ctx, KR_ERR_UNSUPPORTED,
                       "the row-order model has %d features, this build "
                       "computes %d: retrain it",
                       (int)m->nfeatures, KR_PREDICT_NFEATURES);
    for (int32_t f = 0; f < m->nfeatures; f++)
        if (strcmp(m->features[f], feature_names[f]) != 0)
            return kr_fail(ctx, KR_ERR_UNSUPPORTED,
                           "the row-order model's feature %d is '%s', this "
                           "build's is '%s': retrain it",
                           (int)f + 1, m->features[f], feature_names[f]);
    for (int32_t i = 0; i < m->nnodes; i++)
        if (bad_node(m, i))
            return kr_fail(ctx, KR_ERR_UNSUPPORTED,
                           "the row-order model's node %d is malformed",
                           (int)i + 1);
    return KR_OK;
}

int32_t kr_predict_leaf(const kr_tree_model *m, const double *x, char *path,
                        size_t len)
{
    int32_t i = 0;
    size_t used = 0;
    if (len) path[0] = '\0';
    while (m->nodes[i].feature >= 0) {
        const kr_tree_node *n = &m->nodes[i];
        int left = x[n->feature] <= n->threshold;
        if (used < len)
            used += (size_t)snprintf(
                path + used, len - used, "%s%s %s %.6g (%.6g)",
                used ? ", " : "", feature_names[n->feature], left ? "<=" : ">",
                n->threshold, x[n->feature]);
        i = left ? n->left : n->right;
    }
    return i;
}

/* The leaf's best order for `format`, NULL when that format was untimed. */
static const char *order_for(const kr_tree_model *m, int32_t leaf,
                             const char *format)
{
    for (int32_t f = 0; f < m->nformats; f++)
        if (!strcmp(m->formats[f], format))
            return m->format_orders[(size_t)leaf * m->nformats + f];
    return NULL;
}

kr_status kr_predict_choice(kr_ctx *ctx, const kr_tree_model *m,
                            const kr_csr *A, int32_t k, const char *format,
                            kr_prediction *out)
{
    KR_TRY(kr_predict_check(ctx, m));
    kr_spmm_features f;
    KR_TRY(kr_csr_spmm_features(ctx, A, &f));
    double x[KR_PREDICT_NFEATURES];
    kr_predict_features(&f, k, x);
    char path[400];
    int32_t leaf = kr_predict_leaf(m, x, path, sizeof path);
    int given = format && strcmp(format, "auto") != 0;
    out->format = given ? format : m->nodes[leaf].format;
    out->order = given ? order_for(m, leaf, format) : m->nodes[leaf].order;
    if (!out->order)
        return kr_fail(ctx, KR_ERR_UNSUPPORTED,
                       "the row-order model was not trained on format '%s'; "
                       "name a row order with --permute",
                       format);
    snprintf(out->reason, sizeof out->reason,
             "row-order model (%s): %s/%s at k = %d, by %s", m->provenance,
             out->format, out->order, (int)k, path[0] ? path : "its one leaf");
    return KR_OK;
}
