/* Thread lists: "1..8", "1,2,4", "1-4, 6, 8", "1, primes" (the grammar in
 * support.h and FORMATS.md), for case files, the command and user programs
 * alike, and batch-size lists ("1,3,16,128") in the same grammar without
 * primes. Each count at most once: two runs at one count would write the
 * same work files. */
#include <ctype.h>
#include <string.h>

#include "support.h"

/* What a list holds: thread counts or batch sizes. */
typedef struct list_kind {
    const char *what;       /* "thread count", "batch size", "step" */
    const char *list;       /* "thread", "batch", "resume" */
    int max;                /* counts in 1..max */
    int cap;                /* at most this many */
    bool primes;            /* the primes item is allowed */
} list_kind;

/* A count N in 1..max: digits only. */
static bool count_parse(const char *s, int max, int64_t *v)
{
    return isdigit((unsigned char)s[0]) && sb_int_parse(s, 1, max, v, NULL, 0);
}

/* "primes", "primes..B" or "primes-B": the primes up to B (8 when not
 * given), the counts whose partitions share no factor with the power-of-two
 * sizes kernels are usually tested at. false when the item is not one. */
static bool primes_parse(const char *item, int64_t *hi)
{
    if (strncmp(item, "primes", 6) != 0)
        return false;
    const char *rest = item + 6;
    if (rest[0] == '\0') {
        *hi = 8;
        return true;
    }
    if (strncmp(rest, "..", 2) == 0)
        return count_parse(rest + 2, SB_MAX_THREADS, hi);
    return rest[0] == '-' && count_parse(rest + 1, SB_MAX_THREADS, hi);
}

static bool is_prime(int64_t t)
{
    if (t < 2)
        return false;
    for (int64_t d = 2; d * d <= t; d++)
        if (t % d == 0)
            return false;
    return true;
}

/* One item without its blanks: N, A..B or A-B; *lo > *hi for a reversed range. */
static bool item_parse(char *item, int max, int64_t *lo, int64_t *hi)
{
    char *dots = strstr(item, "..");
    char *dash = strchr(item, '-');
    char *second = dots ? dots + 2 : dash ? dash + 1 : NULL;
    if (dots)
        *dots = '\0';
    else if (dash)
        *dash = '\0';
    if (!count_parse(item, max, lo))
        return false;
    if (!second) {
        *hi = *lo;
        return true;
    }
    return count_parse(second, max, hi);
}

static char *blanks_trim(char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    size_t n = strlen(s);
    while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t'))
        s[--n] = '\0';
    return s;
}

static bool list_parse(const char *s, const list_kind *k, int *out, int *n, char *err,
                       size_t errlen)
{
    _Static_assert(SB_MAX_RESUME_STEP >= SB_MAX_BATCH && SB_MAX_BATCH >= SB_MAX_THREADS,
                  "seen holds every list's largest item");
    bool seen[SB_MAX_RESUME_STEP + 1] = {false};
    *n = 0;
    for (const char *at = s;;) {
        size_t len = strcspn(at, ",");
        char buf[64], item[64];
        if (len >= sizeof buf) {
            sb_err_set(err, errlen, "\"%.20s...\" is too long for a %s or range", at, k->what);
            return false;
        }
        memcpy(buf, at, len);
        buf[len] = '\0';
        char *it = blanks_trim(buf);
        snprintf(item, sizeof item, "%s", it);
        int64_t lo, hi;
        bool primes = k->primes && primes_parse(it, &hi);
        if (primes)
            lo = 2;
        if (it[0] == '\0') {
            if (at == s && at[len] == '\0')
                sb_err_set(err, errlen, "the %s list is empty", k->list);
            else
                sb_err_set(err, errlen, "\"%s\" has an empty item", s);
            return false;
        }
        if (!primes && !item_parse(it, k->max, &lo, &hi)) {
            sb_err_set(err, errlen, "\"%s\" is neither a %s in 1..%d, a range "
                       "a..b or a-b of them%s", item, k->what, k->max,
                       k->primes ? ", nor primes or primes..b" : "");
            return false;
        }
        if (primes && hi < 2) {
            sb_err_set(err, errlen, "\"%s\" holds no prime: primes..b needs b >= 2", item);
            return false;
        }
        if (lo > hi) {
            sb_err_set(err, errlen, "\"%s\" is a reversed range: a..b and a-b need a <= b", item);
            return false;
        }
        for (int64_t t = lo; t <= hi; t++) {
            if (primes && !is_prime(t))
                continue;
            if (seen[t]) {
                sb_err_set(err, errlen, "%lld is listed twice", (long long)t);
                return false;
            }
            if (*n == k->cap) {
                sb_err_set(err, errlen, "more than %d %ss", k->cap, k->what);
                return false;
            }
            seen[t] = true;
            out[(*n)++] = (int)t;
        }
        if (at[len] == '\0')
            return true;
        at += len + 1;
    }
}

bool sb_thread_list_parse(const char *s, int threads[SB_MAX_THREADS], int *n, char *err,
                          size_t errlen)
{
    static const list_kind k = {"thread count", "thread", SB_MAX_THREADS, SB_MAX_THREADS, true};
    return list_parse(s, &k, threads, n, err, errlen);
}

bool sb_batch_list_parse(const char *s, int sizes[SB_MAX_BATCH_SIZES], int *n, char *err,
                         size_t errlen)
{
    static const list_kind k = {"batch size", "batch", SB_MAX_BATCH, SB_MAX_BATCH_SIZES, false};
    return list_parse(s, &k, sizes, n, err, errlen);
}

bool sb_resume_list_parse(const char *s, int steps[SB_MAX_RESUME], int *n, char *err,
                          size_t errlen)
{
    static const list_kind k = {"step", "resume", SB_MAX_RESUME_STEP, SB_MAX_RESUME, false};
    return list_parse(s, &k, steps, n, err, errlen);
}
