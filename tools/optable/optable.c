/* samebits-optable: the op table of harness/FORMATS.md (each params group's
 * ops and its [kernel] keys) from the kernel list, kernels.def and
 * params.def, so that the table names every op the list has.
 *
 *   samebits-optable                 print the table
 *   samebits-optable --check FILE    exit 1 if FILE's table is not this one
 *   samebits-optable --write FILE    write this table into FILE
 *
 * The table stands in FILE between the lines BEGIN_MARK and END_MARK.
 * Exit status: 0 done (or the same table), 1 the table differs, 2 a usage
 * or input error. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sb_kernels.h"

#define BEGIN_MARK "<!-- op table: samebits-optable --write harness/FORMATS.md -->\n"
#define END_MARK "<!-- end of op table -->\n"

static const char *const keys_of_params[SB_PARAMS_COUNT] = {
#define SB_PARAMS(name, shapes, batch, optimizer, labels, keys) [SB_PARAMS_##name] = keys,
#include "params.def"
#undef SB_PARAMS
};

/* A growing string. */
typedef struct text {
    char *s;
    size_t len;
} text;

static void append(text *t, const char *s)
{
    size_t n = strlen(s);
    char *grown = realloc(t->s, t->len + n + 1);
    if (grown == NULL) {
        fprintf(stderr, "samebits-optable: out of memory\n");
        exit(2);
    }
    memcpy(grown + t->len, s, n + 1);
    t->s = grown;
    t->len += n;
}

/* The row of params group p: its ops in list order, then its keys; none
 * for a group no op has. */
static void append_row(text *t, sb_op_params p)
{
    int ops = 0;
    for (int op = 0; op < SB_OP_COUNT; op++) {
        if (sb_op_params_of((sb_op)op) != p)
            continue;
        append(t, ops++ ? ", `" : "| `");
        append(t, sb_op_name((sb_op)op));
        append(t, "`");
    }
    if (ops == 0)
        return;
    append(t, " | ");
    append(t, keys_of_params[p]);
    append(t, " |\n");
}

static text make_table(void)
{
    text t = {NULL, 0};
    append(&t, "| ops | keys |\n|---|---|\n");
    for (int p = 0; p < SB_PARAMS_COUNT; p++)
        append_row(&t, (sb_op_params)p);
    return t;
}

static text read_file(const char *path)
{
    text t = {NULL, 0};
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        fprintf(stderr, "samebits-optable: %s: cannot open\n", path);
        exit(2);
    }
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf - 1, f)) > 0) {
        buf[n] = '\0';
        append(&t, buf);
    }
    fclose(f);
    return t;
}

/* Where FILE's table starts (after BEGIN_MARK) and ends (at END_MARK). */
typedef struct span {
    char *begin, *end;
} span;

static span find_table(const char *path, const text *file)
{
    char *begin = strstr(file->s, BEGIN_MARK);
    char *end = begin ? strstr(begin, END_MARK) : NULL;
    if (end == NULL) {
        fprintf(stderr, "samebits-optable: %s: no line \"%.*s\" followed by \"%.*s\"\n", path,
                (int)strlen(BEGIN_MARK) - 1, BEGIN_MARK, (int)strlen(END_MARK) - 1, END_MARK);
        exit(2);
    }
    return (span){begin + strlen(BEGIN_MARK), end};
}

static int line_of(const text *file, const char *at)
{
    int line = 1;
    for (const char *p = file->s; p < at; p++)
        line += *p == '\n';
    return line;
}

static int check(const char *path, const text *table)
{
    text file = read_file(path);
    span s = find_table(path, &file);
    size_t have = (size_t)(s.end - s.begin), i = 0;
    while (i < have && i < table->len && s.begin[i] == table->s[i])
        i++;
    int rc = 0;
    if (i != have || i != table->len) {
        fprintf(stderr,
                "%s:%d: the op table differs from the kernel list's; rewrite it with "
                "samebits-optable --write %s\n",
                path, line_of(&file, s.begin + i), path);
        rc = 1;
    }
    free(file.s);
    return rc;
}

static int write_table(const char *path, const text *table)
{
    text file = read_file(path);
    span s = find_table(path, &file);
    FILE *f = fopen(path, "wb");
    int rc = 2;
    if (f == NULL) {
        fprintf(stderr, "samebits-optable: %s: cannot write\n", path);
    } else {
        fwrite(file.s, 1, (size_t)(s.begin - file.s), f);
        fputs(table->s, f);
        fputs(s.end, f);
        rc = fclose(f) == 0 ? 0 : 2;
    }
    free(file.s);
    return rc;
}

int main(int argc, char **argv)
{
    text table = make_table();
    int rc = 2;
    if (argc == 1) {
        fputs(table.s, stdout);
        rc = 0;
    } else if (argc == 3 && strcmp(argv[1], "--check") == 0) {
        rc = check(argv[2], &table);
    } else if (argc == 3 && strcmp(argv[1], "--write") == 0) {
        rc = write_table(argv[2], &table);
    } else {
        fprintf(stderr, "usage: samebits-optable [--check FILE | --write FILE]\n");
    }
    free(table.s);
    return rc;
}
