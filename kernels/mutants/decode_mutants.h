/* The decode mutants (SB_DECODE_MUTANT of mutants.def): faults of the char
 * GPT's KV-cache decoding, for `samebits decode --mutant NAME`. */
#ifndef SB_DECODE_MUTANTS_H
#define SB_DECODE_MUTANTS_H

#include "model/gpt_decode.h"

int sb_decode_mutant_count(void);
int sb_decode_mutant_find(const char *name);    /* index, or -1 if unknown */
const char *sb_decode_mutant_name(int i);
const char *sb_decode_mutant_fault(int i);      /* one line */
/* The decode attention and decoder fault mutant i runs with. */
sb_attn_decode_fn *sb_decode_mutant_attend(int i);
sb_decode_fault sb_decode_mutant_fault_kind(int i);

/* The mutants' decode attentions (mutant_<name>.c). */
sb_attn_decode_fn sb_mutant_decode_attention_split_follows_length;
sb_attn_decode_fn sb_mutant_decode_softmax_split_max_no_rescale;

#endif
