/* The SpMM features as one nested JSON object (drivers/features_json.h). */
#include "features_json.h"

static void stat3(cli_json *j, const char *key, const kr_stat3 *s)
{
    cli_json_open(j, key);
    cli_json_num(j, "min", s->min);
    cli_json_num(j, "mean", s->mean);
    cli_json_num(j, "max", s->max);
    cli_json_close(j);
}

void cli_json_spmm_features(cli_json *j, const char *key,
                            const kr_spmm_features *f)
{
    cli_json_open(j, key);
    cli_json_num(j, "density", f->density);
    stat3(j, "row_nnz", &f->row_nnz);
    stat3(j, "warp_nnz", &f->warp_nnz);
    stat3(j, "warp_imbalance", &f->warp_imbalance);
    stat3(j, "row_blocks", &f->row_blocks);
    stat3(j, "warp_blocks", &f->warp_blocks);
    stat3(j, "neighbour_distance", &f->neighbour_distance);
    cli_json_close(j);
}
