/* Case files: the [case] section (name, kind, family, seed, mutant). */
#include <string.h>

#include "case/case_loader.h"

static bool name_ok(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n >= sizeof ((sb_case *)0)->name)
        return false;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
              *s == '.' || *s == '_' || *s == '-'))
            return false;
    return true;
}

static const char *const case_keys[] = {"name", "kind", "family", "seed", "mutant", NULL};

sb_status sb_case_load_case(case_loader *ld, sb_case *c)
{
    int at = sb_case_section_line(ld, "case");
    if (at == 0)
        return sb_case_fail(ld, 1, "a [case] section (with kind, family and seed)");
    for (int i = 0; i < ld->n_entries; i++) {
        const case_entry *e = &ld->entries[i];
        if (strcmp(e->section, "case") == 0 && !sb_case_in_list(case_keys, e->key))
            return sb_case_fail(ld, e->line,
                        "a key of [case] (name, kind, family, seed), found \"%s\" (and in a "
                        "mutant case: mutant)", e->key);
    }
    const case_entry *e = sb_case_find(ld, "case", "name");
    if (e != NULL) {
        if (!name_ok(e->value))
            return sb_case_fail(ld, e->line, "name as 1 to 127 of [A-Za-z0-9._-], found \"%s\"", e->value);
        /* name_ok bounds the length; the precision says so to the compiler */
        snprintf(c->name, sizeof c->name, "%.*s", (int)sizeof c->name - 1, e->value);
    } else {
        const char *slash = strrchr(ld->path, '/');
        const char *base = slash ? slash + 1 : ld->path;
        size_t len = strlen(base);
        if (len > 5 && strcmp(base + len - 5, ".case") == 0)
            len -= 5;
        snprintf(c->name, sizeof c->name, "%.*s", (int)len, base);
        if (!name_ok(c->name) || len >= sizeof c->name)
            return sb_case_fail(ld, at, "a name key: the file name \"%s\" is not a valid case name", base);
    }

    if ((e = sb_case_find(ld, "case", "kind")) == NULL)
        return sb_case_fail(ld, at, "key kind (kernel, train or command) in [case]");
    if (!sb_case_kind_from_name(e->value, &c->kind))
        return sb_case_fail(ld, e->line, "kind as kernel, train or command, found \"%s\"",
                            e->value);

    if ((e = sb_case_find(ld, "case", "family")) == NULL)
        return sb_case_fail(ld, at, "key family (ref, det or loose) in [case]");
    c->family = sb_family_from_name(e->value);
    if (c->family == SB_FAMILY_COUNT)
        return sb_case_fail(ld, e->line, "family as ref, det or loose, found \"%s\"", e->value);

    if ((e = sb_case_find(ld, "case", "mutant")) != NULL) {
        const int m = sb_mutant_find(e->value);
        if ((m < 0 || sb_mutant_kind_of(m) != SB_MUTANT_DETERMINISM) &&
            sb_rank_mutant_find(e->value) < 0 && sb_resume_mutant_find(e->value) < 0)
            return sb_case_fail(ld, e->line, "mutant as a DETERMINISM, rank or resume mutant of "
                                     "kernels/mutants/mutants.def, found \"%s\"", e->value);
        if (c->kind == SB_CASE_COMMAND)
            return sb_case_fail(ld, e->line, "no mutant in a kind = command case (a mutant is "
                                             "a det kernel of kernels/mutants/)");
        if (c->family != SB_FAMILY_DET)
            return sb_case_fail(ld, e->line, "family = det in a mutant case (a mutant is a det kernel)");
        snprintf(c->mutant, sizeof c->mutant, "%.*s", (int)sizeof c->mutant - 1, e->value);
    }

    if ((e = sb_case_find(ld, "case", "seed")) == NULL)
        return sb_case_fail(ld, at, "key seed (an integer in [0, 2^64)) in [case]");
    return sb_case_get_u64(ld, e, &c->seed);
}

static const char *const kind_names[] = {
    [SB_CASE_KERNEL] = "kernel", [SB_CASE_TRAIN] = "train", [SB_CASE_COMMAND] = "command"};

const char *sb_case_kind_name(sb_case_kind k)
{
    return kind_names[k];
}

bool sb_case_kind_from_name(const char *name, sb_case_kind *k)
{
    for (size_t i = 0; i < sizeof kind_names / sizeof kind_names[0]; i++)
        if (strcmp(kind_names[i], name) == 0) {
            *k = (sb_case_kind)i;
            return true;
        }
    return false;
}
