/* The shipped row-order model: none yet. bench/spmm_train.py replaces this
 * file with a tree trained on GPU timings (bench/spmm_train.sh); until
 * then `--permute auto` is refused (spmv/predict.c). A tree trained on CPU
 * timings must not be committed here: they say nothing about the GPU. */
#include "spmv/predict.h"

const kr_tree_model kr_row_order_model = {
    "no trained row-order model", 0, NULL, 0, NULL, 0, NULL, NULL,
};
