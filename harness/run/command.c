/* The child of a kind = command case: the producer's own command line
 * (harness/PRODUCERS.md), its placeholders replaced, run by /bin/sh in the
 * case file's directory, which execs it (so the sweep sees the producer's
 * own exit status or signal, not a shell's). Every value is put in single quotes, so a path or
 * probe name reaches the producer as one word whatever it holds; paths are
 * made absolute first, since the command runs elsewhere than the harness. */
#include <inttypes.h>
#include <string.h>
#include <unistd.h>

#include "child.h"
#include "support/support.h"

typedef struct command_line {
    char text[8192];
    size_t used;
    bool full;
} command_line;

static void put(command_line *l, const char *s, size_t n)
{
    if (l->full || n >= sizeof l->text - l->used) {
        l->full = true;
        return;
    }
    memcpy(l->text + l->used, s, n);
    l->used += n;
    l->text[l->used] = '\0';
}

/* s in single quotes, each ' in it written '\'' */
static void put_quoted(command_line *l, const char *s)
{
    put(l, "'", 1);
    for (const char *q; (q = strchr(s, '\'')) != NULL; s = q + 1) {
        put(l, s, (size_t)(q - s));
        put(l, "'\\''", 4);
    }
    put(l, s, strlen(s));
    put(l, "'", 1);
}

/* A path as the command, run in another directory, must see it. */
static void put_path(command_line *l, const char *path)
{
    char abs[2048];
    char cwd[1024];
    if (path[0] != '/' && getcwd(cwd, sizeof cwd) != NULL &&
        (size_t)snprintf(abs, sizeof abs, "%s/%s", cwd, path) < sizeof abs)
        path = abs;
    put_quoted(l, path);
}

static void put_template(command_line *l, const sb_child_run *r, const char *tmpl);

/* One process of a resumed configuration (run/resume.c): the stop key's
 * arguments for the one that stops and writes the checkpoint, the restore
 * key's for the one that restores it; NULL for any other run. */
static const char *resume_hook(const sb_child_run *r)
{
    if (!r->checkpoint)
        return NULL;
    return r->stop_at > 0 ? r->c->command_stop : r->c->command_restore;
}

static void put_value(command_line *l, const sb_child_run *r, const char *name, size_t n)
{
    char num[32];
#define IS(s) (n == strlen(s) && strncmp(name, s, n) == 0)
    if (IS("threads")) {
        snprintf(num, sizeof num, "%d", r->threads);
        put(l, num, strlen(num));
    } else if (IS("seed")) {
        snprintf(num, sizeof num, "%" PRIu64, r->c->seed);
        put(l, num, strlen(num));
    } else if (IS("resume_at")) {
        snprintf(num, sizeof num, "%" PRId64, r->c->run_resume_at);
        put(l, num, strlen(num));
    } else if (IS("checkpoint")) {
        put_path(l, r->checkpoint);
    } else if (IS("dump_step")) {
        snprintf(num, sizeof num, "%" PRId64, r->dump_step);
        put(l, num, strlen(num));
    } else if (IS("trace")) {
        put_path(l, r->trace_path);
    } else if (IS("stream")) {
        put_path(l, r->stream_path);
    } else if (IS("dump_dir")) {
        put_path(l, r->dump_dir);
    } else if (IS("dump_args")) {
        if (r->dump_probe)
            put_template(l, r, r->c->command_dump);
    } else if (IS("stream_args")) {
        if (r->stream_path && r->c->command_stream[0])
            put_template(l, r, r->c->command_stream);
    } else if (IS("stop_args") || IS("restore_args")) {
        const char *hook = resume_hook(r);
        if (hook && (hook == r->c->command_stop) == IS("stop_args"))
            put_template(l, r, hook);
    } else {
        SB_ASSERT(IS("dump_probe"));  /* case_command.c let no other name through */
        put_quoted(l, r->dump_probe);
    }
#undef IS
}

/* " " and the template with each {name} replaced. */
static void put_template(command_line *l, const sb_child_run *r, const char *tmpl)
{
    put(l, " ", 1);
    for (const char *open; (open = strchr(tmpl, '{')) != NULL;) {
        const char *close = strchr(open, '}');
        SB_ASSERT(close != NULL);
        put(l, tmpl, (size_t)(open - tmpl));
        put_value(l, r, open + 1, (size_t)(close - open - 1));
        tmpl = close + 1;
    }
    put(l, tmpl, strlen(tmpl));
}

/* One run of the producer: its dump arguments, if any, for one probe. */
static sb_status command_spawn_one(const sb_child_run *r, sb_child_result *cr, char *err,
                                   size_t errlen)
{
    const sb_case *c = r->c;
    command_line l = {.used = 0};
    put(&l, "cd -- ", 6);
    put_quoted(&l, c->command_dir);
    put(&l, " && exec", 8);
    put_template(&l, r, c->command_run);
    /* the stream's and the dump's arguments go where run places them, else
     * at its end */
    if (r->stream_path && c->command_stream[0] && !strstr(c->command_run, "{stream_args}"))
        put_template(&l, r, c->command_stream);
    if (r->dump_probe && !strstr(c->command_run, "{dump_args}"))
        put_template(&l, r, c->command_dump);
    const char *hook = resume_hook(r);
    if (hook && !strstr(c->command_run, hook == c->command_stop ? "{stop_args}"
                                                                 : "{restore_args}"))
        put_template(&l, r, hook);
    /* what the producer prints is not the sweep's output (its TAP, its
     * tables): it joins the run's stderr */
    put(&l, " >&2", 4);
    if (l.full) {
        sb_err_set(err, errlen, "%s: the command line is longer than %zu bytes", c->path,
                   sizeof l.text - 1);
        return SB_ERR_USAGE;
    }
    char sh[] = "/bin/sh", dash_c[] = "-c";
    char *argv[] = {sh, dash_c, l.text, NULL};
    unlink(r->trace_path);      /* a stale trace must not pass for this child's */
    if (r->stream_path)
        unlink(r->stream_path);
    sb_spawn_options so = {.threads = r->threads, .timeout_seconds = r->timeout_seconds,
                           .stderr_path = r->stderr_path, .own_group = true,
                           .env = c->run_env, .n_env = c->n_run_env};
    sb_status st = sb_spawn_with(argv, &so, cr);
    if (st != SB_OK)
        sb_err_set(err, errlen, "%s: cannot start /bin/sh: %s", c->path,
                   cr->start_errno ? strerror(cr->start_errno) : sb_status_name(st));
    return st;
}

/* The protocol dumps one probe a run (PRODUCERS.md): a list of them (every
 * origin of a run) is one run of the producer per probe, each writing into
 * DIR/<step>/ as the `run` child does. The run that ends the list leaves
 * the trace the locator reads; a producer whose runs differ shows it there. */
static sb_status command_spawn_list(const sb_child_run *r, sb_child_result *cr, char *err,
                                    size_t errlen)
{
    sb_dump_list list = {0};
    sb_status st = sb_dump_list_read(&list, r->dump_list, err, errlen);
    for (int i = 0; st == SB_OK && i < list.n; i++) {
        char dir[1100];
        snprintf(dir, sizeof dir, "%s/%" PRId64, r->dump_dir, list.items[i].step);
        if (!sb_mkdir_parents(dir, err, errlen)) {
            st = SB_ERR_IO;
            break;
        }
        sb_child_run one = *r;
        one.dump_list = NULL;
        one.dump_probe = list.items[i].probe;
        one.dump_step = list.items[i].step;
        one.dump_dir = dir;
        st = command_spawn_one(&one, cr, err, errlen);
        if (st == SB_OK && !(cr->end == SB_CHILD_EXITED && cr->exit_code == 0))
            break;
    }
    sb_dump_list_free(&list);
    return st;
}

sb_status sb_command_spawn(const sb_child_run *r, sb_child_result *cr, char *err, size_t errlen)
{
    return r->dump_list ? command_spawn_list(r, cr, err, errlen)
                        : command_spawn_one(r, cr, err, errlen);
}
