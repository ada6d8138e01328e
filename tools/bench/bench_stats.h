/* A measurement over rounds (the kernel and decode benchmarks): its median,
 * smallest and largest, and the spread of a ratio of two measurements
 * taken round by round. */
#ifndef BENCH_STATS_H
#define BENCH_STATS_H

#include <stdbool.h>
#include <stddef.h>

#define MAX_ROUNDS 1000

typedef struct spread {
    double median, min, max;
} spread;

/* the median of v[0..n), n <= MAX_ROUNDS (v is left as it was) */
double median_of(const double *v, int n);
spread spread_of(const double *v, int n);
/* num[r] / den[r] over rounds: each ratio compares two measurements taken
 * moments apart, so a slow phase of the machine that spans a round cancels
 * in it (a ratio of medians would take each median from a different
 * moment); the spread tells a real gap from noise. */
spread ratio_spread(const double *num, const double *den, int n);
/* " 1.02 [0.97 1.10]" */
void print_spread(spread s);

/* Wall time (cpu false), or on a shared machine the process's CPU time
 * divided by the thread count: what the call would take with a core per
 * thread. (CPU time counts workers spinning at barriers, so it never
 * flatters a kernel.) */
double bench_clock(bool cpu, int threads);
/* The calling thread's clock: wall time, or its own CPU time (cpu). */
double bench_thread_clock(bool cpu);
/* The options every benchmark takes at argv[*i]: --rounds R, --min-time S,
 * --clock wall|cpu; true (and *i past it) when argv[*i] was one. */
bool bench_round_option(int argc, char **argv, int *i, int *rounds, double *min_time,
                        bool *cpu);

/* /proc/loadavg's three load averages ("1.39 1.77 2.64"), or "unknown":
 * how busy the machine was around a measurement. */
void bench_load_text(char *out, size_t size);
/* "load average WHEN: 1.39 1.77 2.64" and a newline */
void bench_load_print(const char *when);

#endif
