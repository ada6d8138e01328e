/* A measurement over rounds (bench_stats.h). */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_stats.h"

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

double median_of(const double *v, int n)
{
    double w[MAX_ROUNDS];
    memcpy(w, v, (size_t)n * sizeof *w);
    qsort(w, (size_t)n, sizeof *w, cmp_double);
    return n % 2 ? w[n / 2] : 0.5 * (w[n / 2 - 1] + w[n / 2]);
}

spread spread_of(const double *v, int n)
{
    spread s = {median_of(v, n), v[0], v[0]};
    for (int i = 1; i < n; i++) {
        s.min = v[i] < s.min ? v[i] : s.min;
        s.max = v[i] > s.max ? v[i] : s.max;
    }
    return s;
}

spread ratio_spread(const double *num, const double *den, int n)
{
    double r[MAX_ROUNDS] = {0};     /* n >= 1; zeroed for the compiler's sake */
    for (int i = 0; i < n; i++)
        r[i] = num[i] / den[i];
    return spread_of(r, n);
}

void print_spread(spread s)
{
    printf(" %5.2f [%4.2f %4.2f]", s.median, s.min, s.max);
}

double bench_clock(bool cpu, int threads)
{
    if (!cpu)
        return omp_get_wtime();
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ((double)ts.tv_sec + (double)ts.tv_nsec * 1e-9) / threads;
}

double bench_thread_clock(bool cpu)
{
    if (!cpu)
        return omp_get_wtime();
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

bool bench_round_option(int argc, char **argv, int *i, int *rounds, double *min_time,
                        bool *cpu)
{
    if (*i + 1 >= argc)
        return false;
    if (strcmp(argv[*i], "--rounds") == 0)
        *rounds = atoi(argv[++*i]);
    else if (strcmp(argv[*i], "--min-time") == 0)
        *min_time = atof(argv[++*i]);
    else if (strcmp(argv[*i], "--clock") == 0 &&
             (strcmp(argv[*i + 1], "wall") == 0 || strcmp(argv[*i + 1], "cpu") == 0))
        *cpu = strcmp(argv[++*i], "cpu") == 0;
    else
        return false;
    return true;
}

void bench_load_text(char *out, size_t size)
{
    double l[3];
    FILE *f = fopen("/proc/loadavg", "r");
    if (f && fscanf(f, "%lf %lf %lf", &l[0], &l[1], &l[2]) == 3)
        snprintf(out, size, "%.2f %.2f %.2f", l[0], l[1], l[2]);
    else
        snprintf(out, size, "unknown");
    if (f)
        fclose(f);
}

void bench_load_print(const char *when)
{
    char text[64];
    bench_load_text(text, sizeof text);
    printf("load average %s: %s\n", when, text);
}
