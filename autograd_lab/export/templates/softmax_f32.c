/* Softmax (log_form 0) or log-softmax (log_form 1) along the middle axis of an outer x n x inner array. The maximum is
   subtracted first, so exp never overflows (the log-sum-exp trick); exp is al_exp_f32, the same bits on every
   target. y may be x: each element is read before it is written. */
AL_LAYER
static void al_softmax_f32(const float *x, float *y, int outer, int n, int inner, int log_form)
{
    int o, i, j;
    for (o = 0; o < outer; ++o) {
        for (i = 0; i < inner; ++i) {
            const float *xs = x + o * n * inner + i;
            float *ys = y + o * n * inner + i;
            float mx = xs[0];
            float sum = 0.0f;
            for (j = 1; j < n; ++j) {
                mx = xs[j * inner] > mx ? xs[j * inner] : mx;
            }
            if (log_form) {
                float lse;
                for (j = 0; j < n; ++j) {
                    sum += al_exp_f32(xs[j * inner] - mx);
                }
                lse = logf(sum);
                for (j = 0; j < n; ++j) {
                    ys[j * inner] = (xs[j * inner] - mx) - lse;
                }
            } else {
                for (j = 0; j < n; ++j) {
                    ys[j * inner] = al_exp_f32(xs[j * inner] - mx);
                    sum += ys[j * inner];
                }
                for (j = 0; j < n; ++j) {
                    ys[j * inner] = ys[j * inner] / sum;
                }
            }
        }
    }
}
