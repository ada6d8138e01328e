/* The greedy-completion experiment (docs/decode.md): N greedy completions
 * of one prompt from a trained char_gpt, each decoded with the KV cache in
 * a batch whose other requests join and leave at random (seeded), as a
 * server's batch does; how many distinct completions, and where each first
 * parted from the first. */
#ifndef SB_DECODE_GREEDY_H
#define SB_DECODE_GREEDY_H

#include "model/gpt_decode.h"
#include "sb_text.h"

/* Others in a step at most: the batch is 1 to SB_GREEDY_MAX_OTHERS + 1 rows. */
#define SB_GREEDY_MAX_OTHERS 15

typedef struct sb_greedy {
    int n;                      /* completions */
    int tokens;                 /* generated per completion: context - prompt */
    int32_t *text;              /* [n][tokens] */
    int *parted;                /* [n]: first token where completion i differs from
                                 * completion 0, -1 where it never does */
    int distinct;               /* distinct completions */
    double max_logit_diff;      /* largest |logit - completion 0's| at a position whose
                                 * text so far was completion 0's */
    double min_margin;          /* smallest gap between the largest and the second
                                 * largest logit at a position of completion 0: a
                                 * difference that large could change its token */
    double seconds;             /* in the decode steps */
    int64_t steps, rows;        /* decode steps, and their rows in all */
} sb_greedy;

/* Runs the experiment on g (its kernel table) with decode attention
 * `attend`: the prompt is the first `prompt` characters of val; the other
 * requests are windows of val; every draw from seed. SB_ERR_NOMEM. */
sb_status sb_greedy_run(sb_greedy *r, sb_gpt *g, sb_attn_decode_fn *attend, const sb_text *val,
                        int prompt, int n, uint64_t seed);
void sb_greedy_free(sb_greedy *r);

#endif
