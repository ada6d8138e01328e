/* Placeholder until the area has tests. */
#include <check.h>

Suite *make_data_suite(void);

START_TEST(test_placeholder)
{
    ck_assert_int_eq(1, 1);
}
END_TEST

Suite *make_data_suite(void)
{
    Suite *s = suite_create("data");
    TCase *tc = tcase_create("placeholder");
    tcase_add_test(tc, test_placeholder);
    suite_add_tcase(s, tc);
    return s;
}
