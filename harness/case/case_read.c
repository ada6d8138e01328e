/* Case files (INI, read with inih) -> sb_case. The syntax is in FORMATS.md.
 *
 * inih only splits the file into (section, key, value); this file collects
 * every entry with its line number first and the sections' files interpret
 * them afterwards (case_loader.h), so keys may come in any order, every
 * message can name its line, and a key or section that means nothing is an
 * error rather than silently ignored. */
#include <errno.h>
#include <string.h>

#include <ini.h>

#include "case/case_loader.h"
#include "support/support.h"

/* inih's line source: counts lines and notes section headers (which inih
 * does not report when the section is empty). */
static char *read_line(char *str, int num, void *stream)
{
    case_loader *ld = stream;
    /* getc rather than fgets, which cannot tell a NUL byte from the line's end */
    int ch = EOF;
    int len = 0;
    while (len < num - 1 && (ch = getc(ld->f)) != EOF) {
        if (ch == '\0') {
            ld->nul_byte = true;
            ld->line++;
            return NULL;
        }
        str[len++] = (char)ch;
        if (ch == '\n')
            break;
    }
    if (len == 0)
        return NULL;
    str[len] = '\0';
    ld->line++;
    ld->max_line = num;
    if (str[len - 1] != '\n' && ch != EOF && (ch = getc(ld->f)) != EOF) {
        ld->line_too_long = true;
        return NULL;
    }
    const char *s = str;
    while (*s == ' ' || *s == '\t')
        s++;
    if (*s == '[') {
        const char *close = strchr(s, ']');
        if (ld->n_sections == MAX_SECTIONS) {
            ld->too_many = true;
        } else if (close != NULL) {
            section_mark *m = &ld->sections[ld->n_sections++];
            snprintf(m->name, sizeof m->name, "%.*s", (int)(close - s - 1), s + 1);
            m->line = ld->line;
        }
    }
    return str;
}

static int on_entry(void *user, const char *section, const char *name, const char *value)
{
    case_loader *ld = user;
    if (ld->n_entries == MAX_ENTRIES) {
        ld->too_many = true;
        return 1;
    }
    case_entry *e = &ld->entries[ld->n_entries++];
    /* Overlong names and values are truncated here and then fail to match
     * any key or to parse as a value, with a message naming the line. */
    snprintf(e->section, sizeof e->section, "%s", section);
    snprintf(e->key, sizeof e->key, "%s", name);
    snprintf(e->value, sizeof e->value, "%s", value);
    e->line = ld->line;
    return 1;
}


static sb_status check_sections(case_loader *ld)
{
    /* [numerics] belongs to `samebits numerics` (numerics/numerics_case.c), which
     * checks its keys; it changes nothing in a run's trace. */
    static const char *const known[] = {"case", "kernel", "train", "command", "sweep",
                                        "numerics", "expect", "invariance", "parallel", NULL};
    for (int i = 0; i < ld->n_sections; i++) {
        const section_mark *m = &ld->sections[i];
        if (!sb_case_in_list(known, m->name))
            return sb_case_fail(ld, m->line,
                        "a section [case], [kernel], [train], [command], [sweep], "
                        "[numerics], [expect], [invariance] or [parallel], found [%s]",
                        m->name);
        for (int j = 0; j < i; j++)
            if (strcmp(ld->sections[j].name, m->name) == 0)
                return sb_case_fail(ld, m->line, "each section once ([%s] is also on line %d)", m->name,
                            ld->sections[j].line);
    }
    for (int i = 0; i < ld->n_entries; i++) {
        const case_entry *e = &ld->entries[i];
        if (e->section[0] == '\0')
            return sb_case_fail(ld, e->line, "a [section] line before the first key");
        for (int j = 0; j < i; j++)
            if (strcmp(ld->entries[j].section, e->section) == 0 &&
                strcmp(ld->entries[j].key, e->key) == 0)
                return sb_case_fail(ld, e->line, "each key once (%s is also on line %d; an indented line "
                                         "continues the value above it)",
                            e->key, ld->entries[j].line);
    }
    return SB_OK;
}

/* The one section that says what runs: [kernel], [train] or [command], as
 * the kind says; the other two are refused. */
static sb_status body_load(case_loader *ld, sb_case *c)
{
    static const char *const body[] = {[SB_CASE_KERNEL] = "kernel", [SB_CASE_TRAIN] = "train",
                                       [SB_CASE_COMMAND] = "command"};
    for (size_t k = 0; k < sizeof body / sizeof body[0]; k++) {
        int at = sb_case_section_line(ld, body[k]);
        if (k != (size_t)c->kind && at != 0)
            return sb_case_fail(ld, at, "no [%s] section in a kind = %s case", body[k],
                                sb_case_kind_name(c->kind));
    }
    switch (c->kind) {
    case SB_CASE_KERNEL:
        return sb_case_load_kernel(ld, c);
    case SB_CASE_TRAIN:
        return sb_case_load_train(ld, c);
    case SB_CASE_COMMAND:
        return sb_case_load_command(ld, c);
    }
    return SB_ERR_USAGE;
}

static sb_status load(case_loader *ld, sb_case *c)
{
    int bad_line = ini_parse_stream(read_line, ld, on_entry, ld);
    if (ld->nul_byte)
        return sb_case_fail(ld, ld->line, "text (a NUL byte on this line)");
    if (ld->line_too_long)
        return sb_case_fail(ld, ld->line, "a line shorter than %d bytes", ld->max_line - 1);
    if (ferror(ld->f)) {
        sb_err_set(ld->err, ld->errlen, "%s:%d: read failed: %s", ld->path, ld->line + 1,
                   strerror(errno));
        return SB_ERR_IO;
    }
    if (bad_line > 0)
        return sb_case_fail(ld, bad_line, "\"key = value\", a [section] line, or a comment (; or #)");
    if (bad_line < 0)
        return sb_case_fail(ld, 1, "a readable case file (inih could not parse it)");
    if (ld->too_many)
        return sb_case_fail(ld, ld->line, "at most %d keys and %d sections", MAX_ENTRIES, MAX_SECTIONS);

    sb_status st = check_sections(ld);
    if (st == SB_OK)
        st = sb_case_load_case(ld, c);
    if (st == SB_OK)
        st = body_load(ld, c);
    if (st == SB_OK)
        st = sb_case_load_sweep(ld, c);
    if (st == SB_OK)
        st = sb_case_load_expect(ld, c);
    if (st == SB_OK)
        st = sb_case_load_invariance(ld, c);
    if (st == SB_OK)
        st = sb_case_load_parallel(ld, c);
    if (st == SB_OK)
        sb_case_digest_set(c);
    return st;
}

sb_status sb_case_load(sb_case *c, const char *path, char *err, size_t errlen)
{
    if (errlen)
        err[0] = '\0';
    if (strlen(path) >= sizeof c->path) {
        sb_err_set(err, errlen, "%s: path too long", path);
        return SB_ERR_USAGE;
    }
    FILE *f = sb_input_open(path, "r", err, errlen);
    if (f == NULL)
        return SB_ERR_IO;
    case_loader *ld = calloc(1, sizeof *ld);
    if (ld == NULL) {
        fclose(f);
        return SB_ERR_NOMEM;
    }
    ld->f = f;
    ld->path = path;
    ld->err = err;
    ld->errlen = errlen;
    sb_case tmp;
    memset(&tmp, 0, sizeof tmp);
    snprintf(tmp.path, sizeof tmp.path, "%s", path);
    sb_status st = load(ld, &tmp);
    fclose(f);
    free(ld);
    if (st == SB_OK)
        *c = tmp;
    return st;
}
