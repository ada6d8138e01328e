/* Text data sets for the character-level models: a file of bytes read into
 * tokens of a fixed character vocabulary.
 *
 * The vocabulary (SB_TEXT_VOCAB = 98 tokens) is fixed, not taken from the
 * file, so a token id means the same character in every data set and slice:
 *   0        '\n'
 *   1        '\t'
 *   2..96    the printable ASCII characters ' ' (0x20) .. '~' (0x7e), in order
 *   97       any other byte (the few bytes of UTF-8 or Latin-1 text, other
 *            control characters)
 * sb_text_char gives the character a token prints as ('?' for token 97). */
#ifndef SB_TEXT_H
#define SB_TEXT_H

#include <stdbool.h>

#include "sb_common.h"

#define SB_TEXT_VOCAB 98
#define SB_TEXT_OTHER 97

typedef struct sb_text {
    int64_t n;          /* tokens (one per byte of the file) */
    uint8_t *tokens;    /* n token ids in [0, SB_TEXT_VOCAB) */
    int owns;           /* 1 when tokens was allocated for this text */
} sb_text;

/* The token of a byte, and the character a token prints as. */
int sb_text_token(unsigned char byte);
char sb_text_char(int token);

/* Reads the file at path into tokens. expect_bytes > 0: the file must have
 * exactly that many bytes, and expect_xxh3 (when nonzero) must be the XXH3-64
 * of them, so a truncated or altered copy is refused; 0 takes any length.
 * A file that is empty, holds a NUL byte (not text) or is shorter or longer
 * than expected is an error naming the file and the byte position;
 * SB_ERR_INPUT (SB_ERR_IO when it cannot be read, SB_ERR_NOMEM). */
sb_status sb_text_load(sb_text *out, const char *path, int64_t expect_bytes,
                       uint64_t expect_xxh3, char *err, size_t errlen);

/* Opens a text data set by name:
 *   "fortunes"   data_dir/fortunes.txt: Debian 12's fortunes package
 *                (1:1.99.1-7.3) as tools/fetch-data writes it, checked for
 *                its length and content here
 * data_dir NULL means "data". A missing file says how to get it; an unknown
 * name is SB_ERR_USAGE. */
sb_status sb_text_open(sb_text *out, const char *name, const char *data_dir, char *err,
                       size_t errlen);
/* true for a name sb_text_open knows. */
bool sb_text_known(const char *name);

/* A view of tokens [begin, end) of t; SB_ERR_USAGE if out of range. */
sb_status sb_text_slice(sb_text *out, const sb_text *t, int64_t begin, int64_t end);

/* The unigram entropy of t in nats per character, -sum_v f_v ln f_v over the
 * tokens' frequencies f_v in t itself: the cross-entropy of the best model
 * that ignores context, in the units of the models' loss. 0 for an empty t. */
double sb_text_unigram_entropy(const sb_text *t);

void sb_text_free(sb_text *t);

#endif
