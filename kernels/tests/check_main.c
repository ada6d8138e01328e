/* The main of every Check test executable: runs the one suite the build
 * names (SB_SUITE_MAKER) and fails on any failure.
 *
 * A suite that needs something from outside (a data set, NumPy) names,
 * with SB_SUITE_NEEDS, a function that says why it cannot run (NULL when it
 * can); then the executable prints that reason and exits 77, which meson
 * shows as SKIP, rather than passing without having run. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>

Suite *SB_SUITE_MAKER(void);
#ifdef SB_SUITE_NEEDS
const char *SB_SUITE_NEEDS(void);
#endif

int main(void)
{
#ifdef SB_SUITE_NEEDS
    const char *missing = SB_SUITE_NEEDS();
    if (missing) {
        printf("skipped: %s\n", missing);
        return 77;
    }
#endif
    SRunner *runner = srunner_create(SB_SUITE_MAKER());
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
