/* The text reader: the fixed vocabulary, round trips through small files
 * written here, every error path (empty, NUL byte, truncated, longer,
 * altered), slicing and the data set names. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <xxhash.h>

#include "sb_text.h"

Suite *make_text_suite(void);

static char tmp_dir[] = "/tmp/samebits_test_text_XXXXXX";
static char path[600];
static char err[512];

static void setup(void)
{
    ck_assert_ptr_nonnull(mkdtemp(tmp_dir));
    snprintf(path, sizeof path, "%s/fortunes.txt", tmp_dir);
    err[0] = '\0';
}

static void teardown(void)
{
    unlink(path);
    rmdir(tmp_dir);
    memcpy(tmp_dir + strlen(tmp_dir) - 6, "XXXXXX", 6);
}

static void write_file(const char *bytes, size_t n)
{
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(bytes, 1, n, f), n);
    ck_assert_int_eq(fclose(f), 0);
}

START_TEST(test_vocabulary)
{
    ck_assert_int_eq(SB_TEXT_VOCAB, 98);
    ck_assert_int_eq(sb_text_token('\n'), 0);
    ck_assert_int_eq(sb_text_token('\t'), 1);
    ck_assert_int_eq(sb_text_token(' '), 2);
    ck_assert_int_eq(sb_text_token('A'), 2 + 0x41 - 0x20);
    ck_assert_int_eq(sb_text_token('~'), 96);
    ck_assert_int_eq(sb_text_token(0x7f), SB_TEXT_OTHER);
    ck_assert_int_eq(sb_text_token(0xc3), SB_TEXT_OTHER);
    ck_assert_int_eq(sb_text_token('\r'), SB_TEXT_OTHER);
    /* every token but "other" prints as the byte it came from */
    for (int b = 0; b < 256; b++) {
        int t = sb_text_token((unsigned char)b);
        ck_assert_int_ge(t, 0);
        ck_assert_int_lt(t, SB_TEXT_VOCAB);
        if (t != SB_TEXT_OTHER)
            ck_assert_int_eq((unsigned char)sb_text_char(t), b);
    }
    ck_assert_int_eq(sb_text_char(SB_TEXT_OTHER), '?');
}
END_TEST

START_TEST(test_round_trip)
{
    static const char text[] = "Hi!\n\tok \xc3\xa9\n";
    const size_t n = sizeof text - 1;
    write_file(text, n);
    sb_text t;
    ck_assert_int_eq(sb_text_load(&t, path, (int64_t)n, XXH3_64bits(text, n), err, sizeof err),
                     SB_OK);
    ck_assert_int_eq(t.n, (int64_t)n);
    for (size_t i = 0; i < n; i++)
        ck_assert_int_eq(t.tokens[i], sb_text_token((unsigned char)text[i]));
    sb_text s;
    ck_assert_int_eq(sb_text_slice(&s, &t, 4, 7), SB_OK);
    ck_assert_int_eq(s.n, 3);
    ck_assert_int_eq(s.tokens[0], 1); /* the tab */
    ck_assert_int_eq(sb_text_slice(&s, &t, 4, (int64_t)n + 1), SB_ERR_USAGE);
    ck_assert_int_eq(sb_text_slice(&s, &t, 5, 4), SB_ERR_USAGE);
    sb_text_free(&t);
    /* no expectation: any length */
    ck_assert_int_eq(sb_text_load(&t, path, 0, 0, err, sizeof err), SB_OK);
    sb_text_free(&t);
}
END_TEST

/* Loads the file with the given expectations and checks the one-line error. */
static void refused(int64_t bytes, uint64_t digest, sb_status st, const char *what)
{
    sb_text t;
    ck_assert_int_eq(sb_text_load(&t, path, bytes, digest, err, sizeof err), st);
    ck_assert_msg(strstr(err, path) == err, "%s", err);
    ck_assert_msg(strstr(err, what) != NULL, "%s", err);
    ck_assert_ptr_null(strchr(err, '\n'));
    ck_assert_ptr_null(t.tokens);
}

START_TEST(test_unigram_entropy)
{
    /* "aabb": two characters, each half the time: ln 2; one character: 0 */
    write_file("aabb", 4);
    sb_text t;
    ck_assert_int_eq(sb_text_load(&t, path, 0, 0, err, sizeof err), SB_OK);
    ck_assert_double_eq_tol(sb_text_unigram_entropy(&t), log(2.0), 1e-15);
    sb_text s;
    ck_assert_int_eq(sb_text_slice(&s, &t, 0, 2), SB_OK);
    ck_assert_double_le(fabs(sb_text_unigram_entropy(&s)), 0.0); /* exactly 0 */
    ck_assert_int_eq(sb_text_slice(&s, &t, 0, 0), SB_OK);
    ck_assert_double_le(fabs(sb_text_unigram_entropy(&s)), 0.0);
    sb_text_free(&t);
}
END_TEST

START_TEST(test_errors)
{
    refused(0, 0, SB_ERR_IO, "cannot open");
    write_file("", 0);
    refused(0, 0, SB_ERR_INPUT, "at byte 0: expected text, found an empty file");
    write_file("ab\0cd", 5);
    refused(0, 0, SB_ERR_INPUT, "at byte 2: expected text, found a NUL byte");
    write_file("abcd", 4);
    refused(6, 0, SB_ERR_INPUT, "at byte 4: expected 6 bytes, the file has 4 (truncated");
    refused(3, 0, SB_ERR_INPUT, "at byte 3: expected 3 bytes, the file has 4 (not the pinned");
    refused(4, XXH3_64bits("abce", 4), SB_ERR_INPUT, "expected the pinned text");
}
END_TEST

START_TEST(test_open_by_name)
{
    sb_text t;
    ck_assert(sb_text_known("fortunes"));
    ck_assert(!sb_text_known("mnist"));
    ck_assert_int_eq(sb_text_open(&t, "shakespeare", tmp_dir, err, sizeof err), SB_ERR_USAGE);
    ck_assert_ptr_nonnull(strstr(err, "known: fortunes"));
    ck_assert_int_eq(sb_text_open(&t, "fortunes", tmp_dir, err, sizeof err), SB_ERR_INPUT);
    ck_assert_ptr_nonnull(strstr(err, "missing (data set 'fortunes')"));
    ck_assert_ptr_nonnull(strstr(err, "apt-get install fortunes"));
    /* a copy that is not the pinned text is refused, naming the file */
    write_file("fortune\n%\n", 10);
    ck_assert_int_eq(sb_text_open(&t, "fortunes", tmp_dir, err, sizeof err), SB_ERR_INPUT);
    ck_assert_msg(strstr(err, path) == err, "%s", err);
    ck_assert_ptr_nonnull(strstr(err, "truncated"));
}
END_TEST

Suite *make_text_suite(void)
{
    Suite *s = suite_create("text");
    TCase *tc = tcase_create("text");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_vocabulary);
    tcase_add_test(tc, test_round_trip);
    tcase_add_test(tc, test_unigram_entropy);
    tcase_add_test(tc, test_errors);
    tcase_add_test(tc, test_open_by_name);
    suite_add_tcase(s, tc);
    return s;
}
