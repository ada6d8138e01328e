/* The greedy-completion experiment (decode_greedy.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "decode/decode.h"
#include "decode/decode_greedy.h"
#include "sb_rng.h"

/* A draw of completion c, step `step`, for purpose k. */
static uint32_t draw(uint64_t seed, int c, int step, int k)
{
    return sb_rng_u32(seed, SB_STREAM_DECODE + 1, (uint32_t)c, ((uint64_t)step << 8) | (uint64_t)k);
}

typedef struct other {
    bool active;
    int pos;
    const uint8_t *text;
} other;

/* The largest logit of x[0..n) less the second largest. */
static double margin(const float *x, int n)
{
    double a = -HUGE_VAL, b = -HUGE_VAL;
    for (int i = 0; i < n; i++) {
        const double v = (double)x[i];
        if (v > a)
            b = a, a = v;
        else if (v > b)
            b = v;
    }
    return a - b;
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Others leave (at the end of the context, or by a 1 in 8 draw) and join
 * (up to 3 a step, each by a 1 in 2 draw, while slots are free): a joining
 * one is a window of val from a drawn start, prefilled with a drawn prompt. */
static void others_churn(other *o, sb_gpt_decoder *d, const sb_text *val, uint64_t seed, int c,
                         int step)
{
    const int T = d->g->context;
    for (int j = 0; j < SB_GREEDY_MAX_OTHERS; j++)
        if (o[j].active && (o[j].pos == T || draw(seed, c, step, 1 + j) % 8 == 0))
            o[j].active = false;
    int32_t tok[512];
    for (int k = 0, j = 0; k < 3; k++) {
        if (draw(seed, c, step, 32 + 3 * k) % 2 == 0)
            continue;
        while (j < SB_GREEDY_MAX_OTHERS && o[j].active)
            j++;
        if (j == SB_GREEDY_MAX_OTHERS)
            return;
        const uint64_t starts = (uint64_t)(val->n - T - 1);
        o[j].text = val->tokens + draw(seed, c, step, 33 + 3 * k) % starts;
        int p = 1 + (int)(draw(seed, c, step, 34 + 3 * k) % (uint32_t)(T - 1));
        if (p > (int)(sizeof tok / sizeof tok[0]))
            p = (int)(sizeof tok / sizeof tok[0]);
        for (int i = 0; i < p; i++)
            tok[i] = o[j].text[i];
        sb_gpt_prefill(d, j + 1, tok, p);
        o[j].pos = p;
        o[j].active = true;
    }
}

/* Completion c into text [tokens]; logits of its positions into lg
 * [tokens][V] (lg row i: the logits that chose text[i]). */
static void complete(sb_greedy *r, sb_gpt_decoder *d, const sb_text *val, int prompt,
                     uint64_t seed, int c, int32_t *text, float *lg)
{
    sb_gpt *g = d->g;
    const int T = g->context, V = g->vocab;
    int32_t tok[512];
    for (int i = 0; i < prompt; i++)
        tok[i] = val->tokens[i];
    sb_gpt_prefill(d, 0, tok, prompt);
    memcpy(lg, g->logits + (size_t)(prompt - 1) * (size_t)V, (size_t)V * sizeof *lg);
    text[0] = (int32_t)sb_decode_argmax(lg, (size_t)V);
    other o[SB_GREEDY_MAX_OTHERS];
    memset(o, 0, sizeof o);
    sb_gpt_request req[SB_GREEDY_MAX_OTHERS + 1];
    for (int i = 1, pos = prompt; pos < T - 1; i++, pos++) {
        const int step = pos - prompt;
        others_churn(o, d, val, seed, c, step);
        int n = 0;
        for (int j = 0; j < SB_GREEDY_MAX_OTHERS; j++)
            if (o[j].active)
                req[n++] = (sb_gpt_request){j + 1, o[j].pos, o[j].text[o[j].pos]};
        /* the completion takes a drawn row, the others keep their order */
        const int mine = (int)(draw(seed, c, step, 0) % (uint32_t)(n + 1));
        memmove(req + mine + 1, req + mine, (size_t)(n - mine) * sizeof *req);
        req[mine] = (sb_gpt_request){0, pos, text[i - 1]};
        n++;
        double t0 = now();
        sb_gpt_decode_step(d, req, n);
        r->seconds += now() - t0;
        r->steps++;
        r->rows += n;
        for (int j = 0; j < SB_GREEDY_MAX_OTHERS; j++)
            if (o[j].active)
                o[j].pos++;
        float *row = lg + (size_t)i * (size_t)V;
        memcpy(row, d->logits + (size_t)mine * (size_t)V, (size_t)V * sizeof *row);
        text[i] = (int32_t)sb_decode_argmax(row, (size_t)V);
    }
}

sb_status sb_greedy_run(sb_greedy *r, sb_gpt *g, sb_attn_decode_fn *attend, const sb_text *val,
                        int prompt, int n, uint64_t seed)
{
    memset(r, 0, sizeof *r);
    const int T = g->context, V = g->vocab;
    SB_ASSERT(n >= 1 && prompt >= 1 && prompt < T && T <= 512);
    r->n = n;
    r->tokens = T - prompt;
    r->text = malloc((size_t)n * (size_t)r->tokens * sizeof *r->text);
    r->parted = malloc((size_t)n * sizeof *r->parted);
    float *lg0 = malloc((size_t)r->tokens * (size_t)V * sizeof *lg0);
    float *lg = malloc((size_t)r->tokens * (size_t)V * sizeof *lg);
    sb_gpt_decoder d;
    bool have_d = sb_gpt_decoder_alloc(&d, g, attend, SB_GREEDY_MAX_OTHERS + 1,
                                       SB_GREEDY_MAX_OTHERS + 1) == SB_OK;
    if (!r->text || !r->parted || !lg0 || !lg || !have_d) {
        if (have_d)
            sb_gpt_decoder_free(&d);
        free(lg0), free(lg);
        sb_greedy_free(r);
        return SB_ERR_NOMEM;
    }
    for (int c = 0; c < n; c++) {
        int32_t *text = r->text + (size_t)c * (size_t)r->tokens;
        complete(r, &d, val, prompt, seed, c, text, c == 0 ? lg0 : lg);
        r->parted[c] = -1;
        for (int i = 0; c == 0 && i < r->tokens; i++) {
            const double m = margin(lg0 + (size_t)i * (size_t)V, V);
            r->min_margin = i == 0 || m < r->min_margin ? m : r->min_margin;
        }
        for (int i = 0; c > 0 && i < r->tokens; i++) {
            for (int v = 0; v < V; v++)
                r->max_logit_diff = fmax(r->max_logit_diff,
                                         fabs((double)lg[(size_t)i * (size_t)V + (size_t)v] -
                                              (double)lg0[(size_t)i * (size_t)V + (size_t)v]));
            if (text[i] != r->text[i]) {
                r->parted[c] = i;
                break;
            }
        }
        bool seen = false;
        for (int e = 0; e < c && !seen; e++)
            seen = memcmp(text, r->text + (size_t)e * (size_t)r->tokens,
                          (size_t)r->tokens * sizeof *text) == 0;
        r->distinct += !seen;
    }
    sb_gpt_decoder_free(&d);
    free(lg0), free(lg);
    return SB_OK;
}

void sb_greedy_free(sb_greedy *r)
{
    free(r->text);
    free(r->parted);
    memset(r, 0, sizeof *r);
}
