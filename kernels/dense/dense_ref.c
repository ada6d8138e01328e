/* dense, the readable definition: serial loops, float accumulators, terms
 * added in the natural loop order. w is [in][out] (Keras layout). */
#include "dense.h"

void sb_dense_fwd_ref(float *y,             /* [n][out] */
                      const float *x,       /* [n][in] */
                      const float *w,       /* [in][out] */
                      const float *b,       /* [out] */
                      const sb_dense_shape *s)
{
    for (int i = 0; i < s->n; i++)
        for (int o = 0; o < s->out; o++) {
            float acc = 0.0f;
            for (int j = 0; j < s->in; j++)
                acc += x[(size_t)i * s->in + j] * w[(size_t)j * s->out + o];
            y[(size_t)i * s->out + o] = acc + b[o];
        }
}

void sb_dense_bwd_data_ref(float *dx,       /* [n][in] */
                           const float *dy, /* [n][out] */
                           const float *w,  /* [in][out] */
                           const sb_dense_shape *s)
{
    for (int i = 0; i < s->n; i++)
        for (int j = 0; j < s->in; j++) {
            float acc = 0.0f;
            for (int o = 0; o < s->out; o++)
                acc += dy[(size_t)i * s->out + o] * w[(size_t)j * s->out + o];
            dx[(size_t)i * s->in + j] = acc;
        }
}

void sb_dense_bwd_weights_ref(float *dw,       /* [in][out] */
                              const float *dy, /* [n][out] */
                              const float *x,  /* [n][in] */
                              const sb_dense_shape *s)
{
    for (int j = 0; j < s->in; j++)
        for (int o = 0; o < s->out; o++) {
            float acc = 0.0f;
            for (int i = 0; i < s->n; i++)
                acc += x[(size_t)i * s->in + j] * dy[(size_t)i * s->out + o];
            dw[(size_t)j * s->out + o] = acc;
        }
}

void sb_dense_bwd_bias_ref(float *db,       /* [out] */
                           const float *dy, /* [n][out] */
                           const sb_dense_shape *s)
{
    for (int o = 0; o < s->out; o++) {
        float acc = 0.0f;
        for (int i = 0; i < s->n; i++)
            acc += dy[(size_t)i * s->out + o];
        db[o] = acc;
    }
}
