/* The loops of the tail-path and remainder mutants (tail_paths.h). */
#include "tail_paths.h"

void sb_mutant_pool_with_tail(float *y, const float *x, const sb_window_shape *s,
                              sb_window_fn *main, sb_window_fn *tail)
{
    sb_window_shape_check(s);
    const int p = sb_window_p(s), q = sb_window_q(s);
    const int64_t planes = (int64_t)s->n * s->c;
#pragma omp parallel
    {
        sb_window_fn *window = sb_mutant_in_tail() ? tail : main;
#pragma omp for schedule(static)
        for (int64_t plane = 0; plane < planes; plane++) {
            const float *xp = x + (size_t)plane * (size_t)s->h * (size_t)s->w;
            float *yp = y + (size_t)plane * (size_t)p * (size_t)q;
            for (int i = 0; i < p; i++)
                for (int j = 0; j < q; j++)
                    yp[(size_t)i * (size_t)q + (size_t)j] = window(sb_window_at(xp, s, i, j), s);
        }
    }
}

void sb_mutant_rows_with_tail(float *out, const float *x, const sb_norm_shape *s,
                              sb_mutant_row_fn *main, sb_mutant_row_fn *tail)
{
    const size_t c = (size_t)s->c;
#pragma omp parallel
    {
        sb_mutant_row_fn *row = sb_mutant_in_tail() ? tail : main;
#pragma omp for schedule(static)
        for (int i = 0; i < s->n; i++)
            out[i] = row(x + (size_t)i * c, c, s->eps);
    }
}

void sb_mutant_share_with_remainder(size_t n, size_t group, sb_mutant_span_fn *span, void *ctx)
{
#pragma omp parallel
    {
        const size_t me = (size_t)omp_get_thread_num(), team = (size_t)omp_get_num_threads();
        const size_t first = n * me / team, end = n * (me + 1) / team;
        const size_t groups_end = first + (end - first) / group * group;
        span(ctx, first, groups_end, false);
        span(ctx, groups_end, end, true);
    }
}

typedef struct pairs {
    float *out;
    const float *u, *v;
    sb_mutant_pair_fn *main, *remainder;
} pairs;

static void pairs_span(void *ctx, size_t lo, size_t hi, bool remainder)
{
    const pairs *p = ctx;
    sb_mutant_pair_fn *element = remainder ? p->remainder : p->main;
    for (size_t i = lo; i < hi; i++)
        p->out[i] = element(p->u[i], p->v[i]);
}

void sb_mutant_pairs_with_remainder(float *out, const float *u, const float *v, size_t n,
                                    sb_mutant_pair_fn *main, sb_mutant_pair_fn *remainder)
{
    pairs p = {out, u, v, main, remainder};
    sb_mutant_share_with_remainder(n, SB_MUTANT_GROUP, pairs_span, &p);
}

typedef struct nll_terms {
    float *terms;
    const float *logprob, *weight;
    const int32_t *labels;
    const sb_nll_shape *s;
    sb_mutant_nll_term_fn *remainder;
} nll_terms;

static void nll_terms_span(void *ctx, size_t lo, size_t hi, bool remainder)
{
    const nll_terms *t = ctx;
    sb_mutant_nll_term_fn *term = remainder ? t->remainder : sb_nll_term;
    for (size_t e = lo; e < hi; e++)
        t->terms[e] = term(t->logprob, t->labels, t->weight, t->s, e);
}

void sb_mutant_nll_terms_with_remainder(float *terms, const float *logprob, const int32_t *labels,
                                        const float *weight, const sb_nll_shape *s,
                                        sb_mutant_nll_term_fn *remainder)
{
    sb_nll_shape_check(s);
    nll_terms t = {terms, logprob, weight, labels, s, remainder};
    sb_mutant_share_with_remainder(sb_nll_count(s), SB_MUTANT_GROUP, nll_terms_span, &t);
}
void sb_mutant_elements_with_tail(float *y, const float *const *in, size_t n,
                                  sb_mutant_element_fn *main, sb_mutant_element_fn *tail)
{
#pragma omp parallel
    {
        sb_mutant_element_fn *element = sb_mutant_in_tail() ? tail : main;
#pragma omp for schedule(static)
        for (int64_t i = 0; i < (int64_t)n; i++)
            y[i] = element(in, (size_t)i);
    }
}
