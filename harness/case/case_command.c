/* Case files: the [command] section of a kind = command case, the command
 * line of a producer (harness/PRODUCERS.md). Each key's placeholders are
 * checked here, so that a misspelt one is an error naming its line rather
 * than a command that runs with a literal "{thread}" in it. */
#include <string.h>

#include "case/case_loader.h"

/* The placeholders each key may hold; `need` must all appear. */
typedef struct command_key {
    const char *key;
    const char *const *may;
    const char *const *need;
} command_key;

static const char *const run_may[] = {"threads", "trace", "seed", "dump_args", "stream_args",
                                      "stop_args", "restore_args", NULL};
static const char *const run_need[] = {"trace", NULL};
static const char *const dump_may[] = {"threads", "seed", "dump_probe", "dump_step", "dump_dir",
                                       NULL};
static const char *const dump_need[] = {"dump_probe", "dump_step", "dump_dir", NULL};
static const char *const stream_may[] = {"threads", "seed", "stream", NULL};
static const char *const stream_need[] = {"stream", NULL};
static const char *const stop_may[] = {"threads", "seed", "resume_at", "checkpoint", NULL};
static const char *const stop_need[] = {"resume_at", "checkpoint", NULL};
static const char *const restore_may[] = {"threads", "seed", "resume_at", "checkpoint", NULL};
static const char *const restore_need[] = {"checkpoint", NULL};

/* Every "{name}" of e's value is one of k->may, and each of k->need is there. */
static sb_status placeholders_check(case_loader *ld, const case_entry *e, const command_key *k)
{
    bool seen[4] = {false};
    for (const char *s = strchr(e->value, '{'); s; s = strchr(s + 1, '{')) {
        const char *close = strchr(s, '}');
        size_t n = close ? (size_t)(close - s - 1) : 0;
        int found = -1;
        for (int i = 0; close && k->may[i]; i++)
            if (strlen(k->may[i]) == n && strncmp(s + 1, k->may[i], n) == 0)
                found = i;
        if (found < 0) {
            char names[128];
            size_t used = 0;
            for (int i = 0; k->may[i]; i++)
                used += (size_t)snprintf(names + used, sizeof names - used, "%s{%s}",
                                         i ? " " : "", k->may[i]);
            return sb_case_fail(ld, e->line, "%s with placeholders among %s (a '{' always "
                                "starts one), found \"%.40s\"", k->key, names, s);
        }
        for (int i = 0; k->need[i]; i++)
            seen[i] = seen[i] || strcmp(k->need[i], k->may[found]) == 0;
    }
    for (int i = 0; k->need[i]; i++)
        if (!seen[i])
            return sb_case_fail(ld, e->line, "placeholder {%s} in %s", k->need[i], k->key);
    return SB_OK;
}

/* run's placeholders of the keys' arguments, {KEY_args}: each at most once
 * (the arguments go in one place) and only with its key (else nothing would
 * go there, silently). */
static sb_status args_places_check(case_loader *ld, const case_entry *run)
{
    static const char *const keys[] = {"dump", "stream", "stop", "restore"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        char place[32];
        snprintf(place, sizeof place, "{%s_args}", keys[i]);
        const char *first = strstr(run->value, place);
        if (first == NULL)
            continue;
        if (strstr(first + 1, place) != NULL)
            return sb_case_fail(ld, run->line, "%s at most once in run (where the %s key's "
                                "arguments go)", place, keys[i]);
        if (sb_case_find(ld, "command", keys[i]) == NULL)
            return sb_case_fail(ld, run->line, "%s in run only with a %s key in [command] "
                                "(the arguments it places)", place, keys[i]);
    }
    return SB_OK;
}

/* Where the command runs: the directory of the case file, or `dir`
 * (absolute, or relative to the case file's directory). */
static sb_status dir_set(case_loader *ld, sb_case *c, int at)
{
    const case_entry *e = sb_case_find(ld, "command", "dir");
    if (e != NULL && e->value[0] == '\0')
        return sb_case_fail(ld, e->line, "dir as a directory");
    const char *slash = strrchr(ld->path, '/');
    int len = slash == NULL ? 1 : (int)(slash == ld->path ? 1 : slash - ld->path);
    const char *base = slash == NULL ? "." : ld->path;
    int n;
    if (e != NULL && e->value[0] == '/')
        n = snprintf(c->command_dir, sizeof c->command_dir, "%s", e->value);
    else if (e != NULL)
        n = snprintf(c->command_dir, sizeof c->command_dir, "%.*s/%s", len, base, e->value);
    else
        n = snprintf(c->command_dir, sizeof c->command_dir, "%.*s", len, base);
    if (n < 0 || (size_t)n >= sizeof c->command_dir)
        return sb_case_fail(ld, e ? e->line : at, "a directory path shorter than %zu characters",
                            sizeof c->command_dir);
    return SB_OK;
}

sb_status sb_case_load_command(case_loader *ld, sb_case *c)
{
    int at = sb_case_section_line(ld, "command");
    if (at == 0)
        return sb_case_fail(ld, sb_case_section_line(ld, "case"),
                            "a [command] section for kind = command");
    static const char *const keys[] = {"run", "dump", "stream", "stop", "restore", "version",
                                       "dir", NULL};
    sb_status st = sb_case_keys_check(ld, "command", keys, (const char *const[]){NULL},
                                      "run dump stream stop restore version dir");
    if (st != SB_OK)
        return st;
    static const command_key checked[] = {{"run", run_may, run_need},
                                          {"dump", dump_may, dump_need},
                                          {"stream", stream_may, stream_need},
                                          {"stop", stop_may, stop_need},
                                          {"restore", restore_may, restore_need}};
    char *field[] = {c->command_run, c->command_dump, c->command_stream, c->command_stop,
                     c->command_restore};
    for (size_t i = 0; i < sizeof checked / sizeof checked[0]; i++) {
        const case_entry *e = sb_case_find(ld, "command", checked[i].key);
        if (e == NULL && i < 2)
            return sb_case_fail(ld, at, "key %s in [command] (harness/PRODUCERS.md)",
                                checked[i].key);
        if (e == NULL)
            continue;
        if ((st = placeholders_check(ld, e, &checked[i])) != SB_OK)
            return st;
        snprintf(field[i], sizeof c->command_run, "%s", e->value);
    }
    /* the resume hook is both processes' arguments or none */
    const case_entry *stop = sb_case_find(ld, "command", "stop");
    const case_entry *restore = sb_case_find(ld, "command", "restore");
    if ((stop == NULL) != (restore == NULL))
        return sb_case_fail(ld, stop ? stop->line : restore->line,
                            "keys stop and restore in [command] together (the resume hook: "
                            "harness/PRODUCERS.md)");
    if ((st = args_places_check(ld, sb_case_find(ld, "command", "run"))) != SB_OK)
        return st;
    const case_entry *e = sb_case_find(ld, "command", "version");
    if (e != NULL && (e->value[0] == '\0' || strlen(e->value) >= sizeof c->command_version))
        return sb_case_fail(ld, e->line, "version as 1 to %zu characters",
                            sizeof c->command_version - 1);
    if (e != NULL)
        snprintf(c->command_version, sizeof c->command_version, "%s", e->value);
    return dir_set(ld, c, at);
}
