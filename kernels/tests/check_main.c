/* The main of every kernel test executable: runs the one suite the build
 * names (SB_SUITE_MAKER) and fails on any failure. */
#include <check.h>
#include <stdlib.h>

Suite *SB_SUITE_MAKER(void);

int main(void)
{
    SRunner *runner = srunner_create(SB_SUITE_MAKER());
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
