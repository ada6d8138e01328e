/* A child process with a thread count and a timeout.
 *
 * posix_spawn, never fork: a fork after OpenMP has started its pool copies a
 * process whose worker threads do not exist in the copy. The child gets
 * OMP_NUM_THREADS and OMP_DYNAMIC=false in its environment (so the runtime
 * cannot lower the count behind our back), then the configuration's own
 * variables (the environment axes), and is waited for by polling
 * waitpid, which needs no signal handler and so cannot disturb a caller's. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sb_harness.h"
#include "support/support.h"

extern char **environ;

/* After SIGTERM, how long a timed-out child may take to exit before SIGKILL. */
#define SB_SPAWN_GRACE_SECONDS 2.0

static void sleep_seconds(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

static bool starts_with_var(const char *entry, const char *var)
{
    size_t n = strlen(var);
    return strncmp(entry, var, n) == 0 && entry[n] == '=';
}

/* The child's environment: ours without the variables we drop or replace,
 * then the ones we set. Only the pointer array is allocated; entries point into environ. */
static char **child_environment(const sb_spawn_options *o, char *threads_var,
                                size_t threads_var_len)
{
    size_t n = 0;
    while (environ[n])
        n++;
    char **env = calloc(n + 5 + (size_t)o->n_env, sizeof *env);
    if (!env)
        return NULL;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        const char *e = environ[i];
        bool drop = starts_with_var(e, "OMP_DYNAMIC") ||
                    (o->threads > 0 && starts_with_var(e, "OMP_NUM_THREADS")) ||
                    (o->unset_proc_bind &&
                     (starts_with_var(e, "OMP_PROC_BIND") || starts_with_var(e, "OMP_PLACES")));
        for (int v = 0; v < o->n_env && !drop; v++)
            drop = strncmp(e, o->env[v], strcspn(o->env[v], "=") + 1) == 0;
        if (!drop)
            env[k++] = environ[i];
    }
    if (o->threads > 0) {
        snprintf(threads_var, threads_var_len, "OMP_NUM_THREADS=%d", o->threads);
        env[k++] = threads_var;
    }
    static char dynamic_var[] = "OMP_DYNAMIC=false";
    env[k++] = dynamic_var;
    /* Open MPI refuses root unless both are set */
    static char root_var[] = "OMPI_ALLOW_RUN_AS_ROOT=1",
                confirm_var[] = "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1";
    if (o->mpi_as_root && geteuid() == 0) {
        env[k++] = root_var;
        env[k++] = confirm_var;
    }
    /* posix_spawn copies the strings and never writes them */
    for (int v = 0; v < o->n_env; v++)
        env[k++] = (char *)(uintptr_t)o->env[v];
    env[k] = NULL;
    return env;
}

/* waitpid without blocking; true when the child has ended (status filled). */
static bool reaped(pid_t pid, int *status)
{
    for (;;) {
        pid_t w = waitpid(pid, status, WNOHANG);
        if (w == pid)
            return true;
        if (w == 0)
            return false;
        if (errno != EINTR)
            SB_ASSERT(!"waitpid failed on our own child");
    }
}

/* Polls until the child ends or `deadline` (monotonic seconds; <= 0: none)
 * passes. Starts with short sleeps so quick children cost little, then backs
 * off to 20 ms. */
static bool wait_until(pid_t pid, double deadline, int *status)
{
    double pause = 0.0005;
    for (;;) {
        if (reaped(pid, status))
            return true;
        if (deadline > 0 && sb_monotonic_seconds() >= deadline)
            return false;
        sleep_seconds(pause);
        if (pause < 0.02)
            pause *= 2;
    }
}

static void wait_blocking(pid_t pid, int *status)
{
    while (waitpid(pid, status, 0) != pid)
        SB_ASSERT(errno == EINTR);
}

sb_status sb_spawn_with(char *const argv[], const sb_spawn_options *o, sb_child_result *r)
{
    if (!argv || !argv[0] || !o || !r || o->threads < 0)
        return SB_ERR_USAGE;
    memset(r, 0, sizeof *r);

    char threads_var[32];
    char **env = child_environment(o, threads_var, sizeof threads_var);
    if (!env)
        return SB_ERR_NOMEM;

    posix_spawn_file_actions_t actions;
    posix_spawnattr_t attr;
    posix_spawn_file_actions_init(&actions);
    posix_spawnattr_init(&attr);
    if (o->stderr_path)
        posix_spawn_file_actions_addopen(&actions, 2, o->stderr_path,
                                         O_WRONLY | O_CREAT | O_TRUNC, 0644);
    /* The child starts with default signal dispositions and nothing blocked,
     * whatever the caller ignores or blocks. */
    sigset_t all, none;
    sigfillset(&all);
    sigemptyset(&none);
    posix_spawnattr_setsigdefault(&attr, &all);
    posix_spawnattr_setsigmask(&attr, &none);
    short flags = POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK;
    if (o->own_group) {
        posix_spawnattr_setpgroup(&attr, 0);
        flags |= POSIX_SPAWN_SETPGROUP;
    }
    posix_spawnattr_setflags(&attr, flags);

    double start = sb_monotonic_seconds();
    pid_t pid;
    int rc = posix_spawnp(&pid, argv[0], &actions, &attr, argv, env);
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
    free(env);
    if (rc != 0) {
        r->start_errno = rc;
        return SB_ERR_IO;
    }

    int status = 0;
    double deadline = o->timeout_seconds > 0 ? start + o->timeout_seconds : 0;
    if (!wait_until(pid, deadline, &status)) {
        r->end = SB_CHILD_TIMED_OUT;
        /* a group leader's pid is its group's id: -pid signals the whole job */
        pid_t target = o->own_group ? -pid : pid;
        kill(target, SIGTERM);
        if (!wait_until(pid, sb_monotonic_seconds() + SB_SPAWN_GRACE_SECONDS, &status)) {
            kill(target, SIGKILL);
            wait_blocking(pid, &status);
        }
        if (o->own_group)
            kill(target, SIGKILL);  /* ranks that outlived their mpirun */
    } else if (WIFSIGNALED(status)) {
        r->end = SB_CHILD_SIGNALED;
    } else {
        r->end = SB_CHILD_EXITED;
    }
    r->seconds = sb_monotonic_seconds() - start;
    if (WIFEXITED(status))
        r->exit_code = WEXITSTATUS(status);
    if (WIFSIGNALED(status))
        r->signal = WTERMSIG(status);
    return SB_OK;
}

sb_status sb_spawn(char *const argv[], int threads, double timeout_seconds,
                   sb_child_result *r)
{
    sb_spawn_options o = {.threads = threads, .timeout_seconds = timeout_seconds};
    return sb_spawn_with(argv, &o, r);
}
