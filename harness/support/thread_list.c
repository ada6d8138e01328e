/* Thread lists: "1..8", "1,2,4", "1-4, 6, 8", "1, primes" (the grammar in
 * support.h and FORMATS.md), for case files, the command and user programs
 * alike. Each count at most once: two runs at one count would write the same
 * work files. */
#include <ctype.h>
#include <string.h>

#include "support.h"

/* A count N in 1..SB_MAX_THREADS: digits only. */
static bool count_parse(const char *s, int64_t *v)
{
    return isdigit((unsigned char)s[0]) && sb_int_parse(s, 1, SB_MAX_THREADS, v, NULL, 0);
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
        return count_parse(rest + 2, hi);
    return rest[0] == '-' && count_parse(rest + 1, hi);
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
static bool item_parse(char *item, int64_t *lo, int64_t *hi)
{
    char *dots = strstr(item, "..");
    char *dash = strchr(item, '-');
    char *second = dots ? dots + 2 : dash ? dash + 1 : NULL;
    if (dots)
        *dots = '\0';
    else if (dash)
        *dash = '\0';
    if (!count_parse(item, lo))
        return false;
    if (!second) {
        *hi = *lo;
        return true;
    }
    return count_parse(second, hi);
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

bool sb_thread_list_parse(const char *s, int threads[SB_MAX_THREADS], int *n, char *err,
                          size_t errlen)
{
    bool seen[SB_MAX_THREADS + 1] = {false};
    *n = 0;
    for (const char *at = s;;) {
        size_t len = strcspn(at, ",");
        char buf[64], item[64];
        if (len >= sizeof buf) {
            sb_err_set(err, errlen, "\"%.20s...\" is too long for a thread count or range", at);
            return false;
        }
        memcpy(buf, at, len);
        buf[len] = '\0';
        char *it = blanks_trim(buf);
        snprintf(item, sizeof item, "%s", it);
        int64_t lo, hi;
        bool primes = primes_parse(it, &hi);
        if (primes)
            lo = 2;
        if (it[0] == '\0') {
            if (at == s && at[len] == '\0')
                sb_err_set(err, errlen, "the thread list is empty");
            else
                sb_err_set(err, errlen, "\"%s\" has an empty item", s);
            return false;
        }
        if (!primes && !item_parse(it, &lo, &hi)) {
            sb_err_set(err, errlen, "\"%s\" is neither a thread count in 1..%d, a range "
                       "a..b or a-b of them, nor primes or primes..b", item, SB_MAX_THREADS);
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
            seen[t] = true;
            threads[(*n)++] = (int)t;
        }
        if (at[len] == '\0')
            return true;
        at += len + 1;
    }
}
