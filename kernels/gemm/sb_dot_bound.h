/* The reordering bound of one sum of products (shared by conv and dense).
 *
 * Any order of evaluating s = sum of n terms t_i (products rounded or fused,
 * partial sums rounded, any bracketing) returns fl(s) with
 *     |fl(s) - s| <= gamma(n) * sum |t_i|        (Higham, ASNA 2nd ed., 3.1)
 * so two orders differ by at most 2 gamma(n) sum |t_i|. The sum of |t_i| is
 * taken in double from exact double products of the float inputs; its own
 * relative error (about n 2^-53) is far below the slack of the bound (gamma
 * of the full term count, padding taps included, where the fewer real
 * terms would do). Gradual underflow is not covered: the bound assumes terms
 * in the normal range. */
#ifndef SB_DOT_BOUND_H
#define SB_DOT_BOUND_H

/* 2 gamma(nterms) abs_sum, rounded up to float; 0 when abs_sum is 0. */
float sb_dot_bound(double nterms, double abs_sum);

#endif
