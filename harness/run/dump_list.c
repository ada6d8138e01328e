/* A dump list: the probes one run dumps, each at its own step (`run
 * --dump-list FILE`, harness/FORMATS.md), so that one re-run serves every
 * divergence the locator judges. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "sb_harness.h"
#include "support/support.h"

void sb_dump_list_free(sb_dump_list *l)
{
    free(l->items);
    l->items = NULL;
    l->n = 0;
}

sb_status sb_dump_list_add(sb_dump_list *l, int64_t step, const char *probe)
{
    if (strlen(probe) >= sizeof l->items[0].probe || strpbrk(probe, "\t\n/") || !probe[0])
        return SB_ERR_USAGE;
    sb_dump_item *more = realloc(l->items, ((size_t)l->n + 1) * sizeof *more);
    if (!more)
        return SB_ERR_NOMEM;
    l->items = more;
    l->items[l->n].step = step;
    snprintf(l->items[l->n].probe, sizeof l->items[l->n].probe, "%s", probe);
    l->n++;
    return SB_OK;
}

int64_t sb_dump_list_last_step(const sb_dump_list *l)
{
    int64_t last = 0;
    for (int i = 0; i < l->n; i++)
        if (l->items[i].step > last)
            last = l->items[i].step;
    return last;
}

sb_status sb_dump_list_write(const sb_dump_list *l, const char *path, char *err, size_t errlen)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        sb_err_set(err, errlen, "%s: cannot write: %s", path, strerror(errno));
        return SB_ERR_IO;
    }
    for (int i = 0; i < l->n; i++)
        fprintf(f, "%" PRId64 "\t%s\n", l->items[i].step, l->items[i].probe);
    bool failed = ferror(f) != 0;
    if (fclose(f) != 0 || failed) {
        sb_err_set(err, errlen, "%s: cannot write", path);
        return SB_ERR_IO;
    }
    return SB_OK;
}

sb_status sb_dump_list_read(sb_dump_list *l, const char *path, char *err, size_t errlen)
{
    memset(l, 0, sizeof *l);
    FILE *f = fopen(path, "r");
    if (!f) {
        sb_err_set(err, errlen, "%s: cannot open: %s", path, strerror(errno));
        return SB_ERR_IO;
    }
    char line[256];
    sb_status st = SB_OK;
    for (int at = 1; st == SB_OK && fgets(line, sizeof line, f); at++) {
        char *tab = strchr(line, '\t'), *end = strchr(line, '\n');
        int64_t step = 0;
        if (!end || !tab) {
            sb_err_set(err, errlen, "%s:%d: expected STEP<tab>PROBE", path, at);
            st = SB_ERR_INPUT;
            break;
        }
        *tab = *end = '\0';
        if (!sb_int_parse(line, 0, INT32_MAX, &step, NULL, 0)) {
            sb_err_set(err, errlen, "%s:%d: step \"%.40s\" is not an integer in [0, %d]", path,
                       at, line, INT32_MAX);
            st = SB_ERR_INPUT;
        } else if ((st = sb_dump_list_add(l, step, tab + 1)) != SB_OK) {
            sb_err_set(err, errlen, "%s:%d: %s \"%.60s\"", path, at,
                       st == SB_ERR_NOMEM ? "out of memory at" : "bad probe name", tab + 1);
            st = st == SB_ERR_NOMEM ? st : SB_ERR_INPUT;
        }
    }
    if (st == SB_OK && l->n == 0) {
        sb_err_set(err, errlen, "%s:1: no probe to dump", path);
        st = SB_ERR_INPUT;
    }
    fclose(f);
    if (st != SB_OK)
        sb_dump_list_free(l);
    return st;
}
