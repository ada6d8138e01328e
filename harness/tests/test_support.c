/* The argument layer and the error formatter (support/support.h): the one
 * thread-list grammar, option tables, integers, seconds, step limits, work
 * directories, and the three forms of an input-file message. */
#include <check.h>
#include <fcntl.h>
#include <sys/file.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "support/support.h"

Suite *make_support_suite(void);

static int threads[SB_MAX_THREADS], n;
static char err[256];

static bool list(const char *s)
{
    err[0] = '\0';
    return sb_thread_list_parse(s, threads, &n, err, sizeof err);
}

static void list_is(const char *s, const int *want, int n_want)
{
    ck_assert_msg(list(s), "\"%s\": %s", s, err);
    ck_assert_int_eq(n, n_want);
    for (int i = 0; i < n_want; i++)
        ck_assert_int_eq(threads[i], want[i]);
}

static void list_refused(const char *s, const char *says)
{
    ck_assert_msg(!list(s), "\"%s\" accepted", s);
    ck_assert_msg(strstr(err, says) != NULL, "\"%s\": \"%s\"", s, err);
}

START_TEST(thread_list_items_and_ranges)
{
    list_is("4", (const int[]){4}, 1);
    list_is("1,2,4", (const int[]){1, 2, 4}, 3);
    list_is("1..4", (const int[]){1, 2, 3, 4}, 4);
    list_is("1-4", (const int[]){1, 2, 3, 4}, 4);
    list_is("3..3", (const int[]){3}, 1);
    /* in the order written, blanks around items */
    list_is(" 8 ,\t1-2 , 5..6\t", (const int[]){8, 1, 2, 5, 6}, 5);
    list_is("64", (const int[]){64}, 1);
    /* the primes: to 8 by default, to b with primes..b or primes-b */
    list_is("1, primes", (const int[]){1, 2, 3, 5, 7}, 5);
    list_is("primes..13,1", (const int[]){2, 3, 5, 7, 11, 13, 1}, 7);
    list_is("primes-2", (const int[]){2}, 1);
    list_is("4,primes..3", (const int[]){4, 2, 3}, 3);
    ck_assert(list("1..64"));
    ck_assert_int_eq(n, SB_MAX_THREADS);
    ck_assert_int_eq(threads[63], 64);
}
END_TEST

START_TEST(thread_list_refusals)
{
    list_refused("8..1", "\"8..1\" is a reversed range: a..b and a-b need a <= b");
    list_refused("1,4-2", "\"4-2\" is a reversed range");
    list_refused("1,2,1", "1 is listed twice");
    list_refused("1..4,3-6", "3 is listed twice");
    list_refused("0", "\"0\" is neither a thread count in 1..64, a range a..b or a-b of them, "
                      "nor primes or primes..b");
    list_refused("65", "\"65\" is neither");
    list_refused("1..65", "\"1..65\" is neither");
    list_refused("1,,2", "\"1,,2\" has an empty item");
    list_refused("1,", "has an empty item");
    list_refused("", "the thread list is empty");
    list_refused("  ", "the thread list is empty");
    list_refused("1..8,primes", "2 is listed twice");
    list_refused("primes..1", "\"primes..1\" holds no prime: primes..b needs b >= 2");
    list_refused("primes..65", "is neither");
    /* counts are digits only, blanks only around a whole item */
    static const char *const bad[] = {"x", "-1", "+2", "1-", "..3", "1...3", "1-2-3",
                                      "1..2..3", "1 .. 3", "1..+3", "2 4", "1e1", "0x2",
                                      "prime", "primes..", "primes8", "primes..x", "1..primes"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        list_refused(bad[i], "is neither a thread count");
    char longer[100];
    memset(longer, '1', sizeof longer - 1);
    longer[sizeof longer - 1] = '\0';
    list_refused(longer, "is too long");
}
END_TEST

START_TEST(options_from_a_table)
{
    const char *threads_s = NULL, *dump = NULL, *dump_step = NULL, *pos[2];
    bool tap = false;
    const sb_option options[] = {{"--threads", &threads_s, NULL}, {"--dump", &dump, NULL},
                                 {"--dump-step", &dump_step, NULL}, {"--tap", NULL, &tap},
                                 {NULL, NULL, NULL}};
    sb_args a = {.options = options, .positional = pos, .max_positional = 2};
    char *ok[] = {"x", "a.case", "--threads", "1-4", "--dump=p", "--dump-step=", "--tap", "-"};
    ck_assert_int_eq(sb_args_parse(&a, 8, ok, 1, err, sizeof err), SB_ARGS_OK);
    ck_assert_str_eq(threads_s, "1-4");
    ck_assert_str_eq(dump, "p");
    ck_assert_str_eq(dump_step, "");
    ck_assert(tap);
    ck_assert_int_eq(a.n_positional, 2);
    ck_assert_str_eq(pos[0], "a.case");
    ck_assert_str_eq(pos[1], "-");      /* a lone "-" is an argument */

    char *no_value[] = {"x", "--threads"};
    ck_assert_int_eq(sb_args_parse(&a, 2, no_value, 1, err, sizeof err), SB_ARGS_NO_VALUE);
    ck_assert_str_eq(err, "option --threads needs a value");
    /* a flag takes no value; a prefix is no option; --help is none either */
    char *unknown[] = {"--tap=1", "--threadsx", "--dum", "--help", "-h"};
    for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; i++) {
        char *argv[] = {"x", unknown[i]};
        ck_assert_int_eq(sb_args_parse(&a, 2, argv, 1, err, sizeof err), SB_ARGS_UNKNOWN);
        ck_assert_str_eq(a.bad, unknown[i]);
    }
    ck_assert_str_eq(err, "unknown option '-h'");
    char *extra[] = {"x", "a", "b", "c", "--bogus"};
    ck_assert_int_eq(sb_args_parse(&a, 5, extra, 1, err, sizeof err), SB_ARGS_EXTRA);
    ck_assert_str_eq(a.bad, "c");
    ck_assert_str_eq(err, "unexpected argument 'c'");
    /* the value of an option may look like one */
    char *value[] = {"x", "--threads", "--tap"};
    tap = false;
    ck_assert_int_eq(sb_args_parse(&a, 3, value, 1, err, sizeof err), SB_ARGS_OK);
    ck_assert_str_eq(threads_s, "--tap");
    ck_assert(!tap);
}
END_TEST

START_TEST(numbers)
{
    int64_t v;
    ck_assert(sb_int_parse("1000", 1, 1000, &v, err, sizeof err) && v == 1000);
    ck_assert(sb_int_parse("-3", -5, 5, &v, err, sizeof err) && v == -3);
    ck_assert(!sb_int_parse("1001", 1, 1000, &v, err, sizeof err));
    ck_assert_str_eq(err, "'1001' is not an integer in 1..1000");
    static const char *const bad[] = {"", "1x", "1.0", "99999999999999999999", " "};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        ck_assert_msg(!sb_int_parse(bad[i], INT64_MIN, INT64_MAX, &v, NULL, 0), "%s", bad[i]);
    ck_assert(sb_max_steps_parse("2147483647", &v, err, sizeof err) && v == INT32_MAX);
    ck_assert(!sb_max_steps_parse("0", &v, err, sizeof err));
    ck_assert_str_eq(err, "'0' is not an integer in 1..2147483647");

    double x;
    ck_assert(sb_seconds_parse("1.5", &x, err, sizeof err));
    ck_assert(x > 1.49 && x < 1.51);
    static const char *const not_seconds[] = {"0", "-1", "nan", "inf", "1s", ""};
    for (size_t i = 0; i < sizeof not_seconds / sizeof not_seconds[0]; i++)
        ck_assert_msg(!sb_seconds_parse(not_seconds[i], &x, err, sizeof err), "%s",
                      not_seconds[i]);
    ck_assert_str_eq(err, "'' is not a positive number of seconds");
}
END_TEST

START_TEST(error_forms)
{
    ck_assert_int_eq(sb_err_expected(err, sizeof err, "a.case", sb_at_line(12), "%s as %d",
                                     "threads", 4), SB_ERR_INPUT);
    ck_assert_str_eq(err, "a.case:12: expected threads as 4");
    sb_err_expected(err, sizeof err, "d.npy", sb_at_byte(10), "a dict");
    ck_assert_str_eq(err, "d.npy: byte 10: expected a dict");
    sb_err_expected(err, sizeof err, "r.json", sb_at_key("cases[0].runs[1]"), "a run");
    ck_assert_str_eq(err, "r.json: cases[0].runs[1]: expected a run");
    char small[8];
    sb_err_set(small, sizeof small, "%s", "longer than eight");
    ck_assert_str_eq(small, "longer ");
    sb_err_set(NULL, 0, "nothing kept");
}
END_TEST

START_TEST(work_directories)
{
    char tmp[] = "/tmp/sb_test_support.XXXXXX", out[1024], given[1100];
    ck_assert_ptr_nonnull(mkdtemp(tmp));
    ck_assert_int_eq(setenv("TMPDIR", tmp, 1), 0);
    bool temporary = false;
    ck_assert_msg(sb_work_dir(out, sizeof out, NULL, "test", &temporary, err, sizeof err), "%s",
                  err);
    ck_assert(temporary);
    ck_assert_int_eq(strncmp(out, tmp, strlen(tmp)), 0);
    ck_assert_ptr_nonnull(strstr(out, "/samebits.test."));
    snprintf(given, sizeof given, "%s/inner", out);
    ck_assert(sb_work_dir(out, sizeof out, given, "test", &temporary, err, sizeof err));
    ck_assert(!temporary);
    ck_assert_str_eq(out, given);
    /* an existing one is fine, one under a missing parent is not */
    ck_assert(sb_work_dir(out, sizeof out, given, "test", &temporary, err, sizeof err));
    snprintf(given, sizeof given, "%s/missing/inner", tmp);
    ck_assert(!sb_work_dir(out, sizeof out, given, "test", &temporary, err, sizeof err));
    ck_assert_ptr_nonnull(strstr(err, "cannot create the work directory"));
    sb_dir_remove_tree(tmp);
    struct stat st;
    ck_assert_int_ne(stat(tmp, &st), 0);
    unsetenv("TMPDIR");

    char self[1024];
    ck_assert(sb_self_exe(self, sizeof self, err, sizeof err));
    ck_assert_ptr_nonnull(strstr(self, "test_support"));
}
END_TEST

/* Writes "text\n" to path through sb_out_file. */
static sb_status out_write(const char *path, const char *text)
{
    sb_out_file o;
    sb_status st = sb_out_open(&o, path, err, sizeof err);
    if (st != SB_OK)
        return st;
    fprintf(o.f, "%s\n", text);
    return sb_out_commit(&o, err, sizeof err);
}

static void file_is(const char *path, const char *text)
{
    char buf[64] = "";
    FILE *f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    ck_assert_ptr_nonnull(fgets(buf, sizeof buf, f));
    fclose(f);
    ck_assert_str_eq(buf, text);
}

START_TEST(output_files_keep_what_they_write_to)
{
    char tmp[] = "/tmp/sb_test_out.XXXXXX", path[256], link[256], target[256];
    ck_assert_ptr_nonnull(mkdtemp(tmp));

    /* a device is written in place and stays a device */
    ck_assert_msg(out_write("/dev/null", "x") == SB_OK, "%s", err);
    struct stat st;
    ck_assert_int_eq(stat("/dev/null", &st), 0);
    ck_assert(S_ISCHR(st.st_mode));
    /* a full device: the errno's text */
    ck_assert_int_eq(out_write("/dev/full", "x"), SB_ERR_IO);
    ck_assert_msg(strstr(err, "/dev/full: cannot write: No space left on device"), "%s", err);

    /* a new file gets the umask's mode, a replaced one keeps its own */
    mode_t mask = umask(027);
    snprintf(path, sizeof path, "%s/r.json", tmp);
    ck_assert_int_eq(out_write(path, "one"), SB_OK);
    ck_assert_int_eq(stat(path, &st), 0);
    ck_assert_uint_eq(st.st_mode & 0777, 0640);
    ck_assert_int_eq(chmod(path, 0604), 0);
    ck_assert_int_eq(out_write(path, "two"), SB_OK);
    ck_assert_int_eq(stat(path, &st), 0);
    ck_assert_uint_eq(st.st_mode & 0777, 0604);
    file_is(path, "two\n");
    umask(mask);

    /* a symbolic link is followed: its target replaced, the link kept,
     * a dangling one's target made */
    snprintf(link, sizeof link, "%s/link.json", tmp);
    ck_assert_int_eq(symlink("r.json", link), 0);
    ck_assert_int_eq(out_write(link, "three"), SB_OK);
    ck_assert_int_eq(lstat(link, &st), 0);
    ck_assert(S_ISLNK(st.st_mode));
    file_is(path, "three\n");
    snprintf(link, sizeof link, "%s/dangling.json", tmp);
    snprintf(target, sizeof target, "%s/made.json", tmp);
    ck_assert_int_eq(symlink("made.json", link), 0);
    ck_assert_int_eq(out_write(link, "four"), SB_OK);
    file_is(target, "four\n");

    /* a FIFO nobody reads is refused at once, one being read is written */
    snprintf(path, sizeof path, "%s/fifo", tmp);
    ck_assert_int_eq(mkfifo(path, 0600), 0);
    ck_assert_int_eq(out_write(path, "x"), SB_ERR_IO);
    ck_assert_msg(strstr(err, "a FIFO that no process reads"), "%s", err);
    int reader = open(path, O_RDONLY | O_NONBLOCK);
    ck_assert_int_ge(reader, 0);
    ck_assert_int_eq(out_write(path, "five"), SB_OK);
    char got[8] = "";
    ck_assert_int_eq(read(reader, got, sizeof got - 1), 5);
    ck_assert_str_eq(got, "five\n");
    close(reader);
    ck_assert_int_eq(stat(path, &st), 0);
    ck_assert(S_ISFIFO(st.st_mode));

    /* an open file of this process (/dev/stdout, /dev/fd/N) is written
     * where it stands, after what it holds, and stays the same file */
    snprintf(path, sizeof path, "%s/stdout.txt", tmp);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, "table\n", 6), 6);
    struct stat was;
    ck_assert_int_eq(fstat(fd, &was), 0);
    snprintf(link, sizeof link, "/dev/fd/%d", fd);
    ck_assert_msg(out_write(link, "json") == SB_OK, "%s", err);
    close(fd);
    char both[16] = "";
    FILE *f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fread(both, 1, sizeof both - 1, f), 11);
    fclose(f);
    ck_assert_str_eq(both, "table\njson\n");
    ck_assert_int_eq(stat(path, &st), 0);
    ck_assert_uint_eq(st.st_ino, was.st_ino);

    /* a directory is refused before anything is written, here and by the
     * check made before a sweep */
    ck_assert_int_eq(out_write(tmp, "x"), SB_ERR_USAGE);
    ck_assert_msg(strstr(err, "is a directory, expected a file"), "%s", err);
    ck_assert(!sb_out_check(tmp, err, sizeof err));
    snprintf(path, sizeof path, "%s/missing/r.json", tmp);
    ck_assert(!sb_out_check(path, err, sizeof err));
    ck_assert_msg(strstr(err, "No such file or directory"), "%s", err);
    const char *paths[] = {NULL, "/dev/null", path};
    ck_assert(!sb_out_check_all(paths, 3, err, sizeof err));
    ck_assert(sb_out_check_all(paths, 2, err, sizeof err));
    sb_dir_remove_tree(tmp);
}
END_TEST

START_TEST(killed_writers_temporaries_go)
{
    char tmp[] = "/tmp/sb_test_out.XXXXXX", dead[256], live[256], other[256];
    ck_assert_ptr_nonnull(mkdtemp(tmp));
    /* a temporary nobody holds, one a live writer holds locked, and a file
     * of the user's that only looks alike */
    snprintf(dead, sizeof dead, "%s/.R.json.sbtmp.abc123", tmp);
    snprintf(live, sizeof live, "%s/.J.xml.sbtmp.def456", tmp);
    snprintf(other, sizeof other, "%s/.R.json.sbtmp.toolong", tmp);
    int fd = open(dead, O_CREAT | O_WRONLY, 0600);
    ck_assert_int_ge(fd, 0);
    close(fd);
    int held = open(live, O_CREAT | O_WRONLY, 0600);
    ck_assert_int_ge(held, 0);
    /* flock is per open file: another open file of this process is a
     * live writer to sb_out_stale_remove */
    ck_assert_int_eq(flock(held, LOCK_EX), 0);
    fd = open(other, O_CREAT | O_WRONLY, 0600);
    ck_assert_int_ge(fd, 0);
    close(fd);
    sb_out_stale_remove(tmp);
    struct stat st;
    ck_assert_int_ne(stat(dead, &st), 0);
    ck_assert_int_eq(stat(live, &st), 0);
    ck_assert_int_eq(stat(other, &st), 0);
    close(held);
    sb_dir_remove_tree(tmp);
}
END_TEST

/* Writers in one directory at once (a sweep's ranks writing their traces,
 * the sweep its own files): each one's sb_out_open removes the temporaries
 * it finds unlocked, so a writer's temporary must stay locked until it has
 * its name. A second process removes stale temporaries as fast as it can
 * while this one replaces a file 200 times: every replacement lands. */
START_TEST(concurrent_writers_keep_each_others_temporaries)
{
    char tmp[] = "/tmp/sb_test_out.XXXXXX", path[256];
    ck_assert_ptr_nonnull(mkdtemp(tmp));
    snprintf(path, sizeof path, "%s/trace.rank2", tmp);
    pid_t self = getpid(), remover = fork();
    ck_assert_int_ge(remover, 0);
    if (remover == 0) {
        /* until killed below, or until this test's process is gone */
        while (getppid() == self)
            sb_out_stale_remove(tmp);
        _exit(0);
    }
    int failed = 0;
    for (int i = 0; i < 200 && !failed; i++)
        if (out_write(path, "x") != SB_OK)
            failed = i + 1;
    kill(remover, SIGKILL);
    waitpid(remover, NULL, 0);
    ck_assert_msg(!failed, "replacement %d: %s", failed, err);
    sb_dir_remove_tree(tmp);
}
END_TEST

START_TEST(inputs_are_regular_files)
{
    char tmp[] = "/tmp/sb_test_in.XXXXXX", fifo[256];
    ck_assert_ptr_nonnull(mkdtemp(tmp));
    snprintf(fifo, sizeof fifo, "%s/case", tmp);
    ck_assert_int_eq(mkfifo(fifo, 0600), 0);
    /* no writer: the open and the check return at once */
    ck_assert_ptr_null(sb_input_open(fifo, "r", err, sizeof err));
    ck_assert_msg(strstr(err, "/case: is a FIFO, expected a regular file"), "%s", err);
    ck_assert_ptr_null(sb_input_open(tmp, "r", err, sizeof err));
    ck_assert_msg(strstr(err, ": is a directory, expected a regular file"), "%s", err);
    ck_assert_ptr_null(sb_input_open("/dev/null", "r", err, sizeof err));
    ck_assert_msg(strstr(err, "/dev/null: is a character device"), "%s", err);
    FILE *f = sb_input_open("/proc/self/exe", "r", err, sizeof err);
    ck_assert_msg(f != NULL, "%s", err);
    fclose(f);
    sb_dir_remove_tree(tmp);
}
END_TEST

Suite *make_support_suite(void)
{
    Suite *s = suite_create("support");
    TCase *tc = tcase_create("support");
    /* the output files' tests sync every file they replace: seconds where
     * other work keeps the disk busy */
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, thread_list_items_and_ranges);
    tcase_add_test(tc, thread_list_refusals);
    tcase_add_test(tc, options_from_a_table);
    tcase_add_test(tc, numbers);
    tcase_add_test(tc, error_forms);
    tcase_add_test(tc, work_directories);
    tcase_add_test(tc, output_files_keep_what_they_write_to);
    tcase_add_test(tc, killed_writers_temporaries_go);
    tcase_add_test(tc, concurrent_writers_keep_each_others_temporaries);
    tcase_add_test(tc, inputs_are_regular_files);
    suite_add_tcase(s, tc);
    return s;
}
