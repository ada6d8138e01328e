/* Between the paths of the decode comparison (decode_paths.c) and the
 * records they make (decode_trace.c): the rows of one position. */
#ifndef SB_DECODE_PATHS_H
#define SB_DECODE_PATHS_H

#include "decode/decode.h"

typedef struct sb_decode_block_rows {
    const float *ln1, *qkv, *attn, *proj, *res1, *ln2, *fc, *gelu, *fcproj, *res2;
    const float *kv;            /* [pos + 1][2C]: the keys and values attention read */
} sb_decode_block_rows;

typedef struct sb_decode_rows {
    const float *embed, *lnf, *logits;
    sb_decode_block_rows block[SB_GPT_MAX_LAYERS];
} sb_decode_rows;

/* The sources: tokens[0..n) (copied into t->tokens) and every parameter. */
void sb_decode_sources(sb_decode_trace *t, const sb_gpt *g, const int32_t *tokens, int n);
/* The records of position pos. */
void sb_decode_emit(sb_decode_trace *t, const sb_gpt *g, int pos, const sb_decode_rows *rows);

#endif
