/* Fully connected layer on one input row: y[j] = act(sum_p x[p] * W[j][p] + b[j]), k inputs, m outputs, b may be NULL.
   W is stored for the loop, not for people: blocks of 8 rows interleaved column by column, w[blk*8*k + p*8 + r]
   holds W[blk*8 + r][p], so the inner loop reads flash contiguously and keeps 8 sums in registers; the m % 8 last rows
   follow one row after another. Each sum runs over p = 0, 1, ..., k-1 in order, on every target. */
static void al_dense_row_f32(const float *x, const float *w, const float *b, float *y, int k, int m, int act,
                             float slope)
{
    int j = 0;
    for (; j + 8 <= m; j += 8) {
        float a0 = 0.0f, a1 = 0.0f, a2 = 0.0f, a3 = 0.0f, a4 = 0.0f, a5 = 0.0f, a6 = 0.0f, a7 = 0.0f;
        const float *xp = x;
        const float *end = x + k;
        while (xp != end) {
            const float xv = *xp++;
            AL_MAC(a0, xv, w[0]);
            AL_MAC(a1, xv, w[1]);
            AL_MAC(a2, xv, w[2]);
            AL_MAC(a3, xv, w[3]);
            AL_MAC(a4, xv, w[4]);
            AL_MAC(a5, xv, w[5]);
            AL_MAC(a6, xv, w[6]);
            AL_MAC(a7, xv, w[7]);
            w += 8;
        }
        /* Store the sums as a group first (this lets x86 compilers keep them in two SIMD registers). */
        y[j] = a0; y[j + 1] = a1; y[j + 2] = a2; y[j + 3] = a3;
        y[j + 4] = a4; y[j + 5] = a5; y[j + 6] = a6; y[j + 7] = a7;
        al_bias_activate(y + j, b != NULL ? b + j : NULL, 8, act, slope);
    }
    for (; j < m; ++j) {
        float acc = 0.0f;
        int p;
        for (p = 0; p < k; ++p) {
            AL_MAC(acc, x[p], w[p]);
        }
        w += k;
        y[j] = acc;
        al_bias_activate(y + j, b != NULL ? b + j : NULL, 1, act, slope);
    }
}

/* The layer on each of `rows` input rows (a token sequence): row r reads x + r*k and writes y + r*m. */
AL_LAYER
static void al_dense_f32(const float *x, const float *w, const float *b, float *y, int rows, int k, int m, int act,
                         float slope)
{
    int r;
    for (r = 0; r < rows; ++r) {
        al_dense_row_f32(x + r * k, w, b, y + r * m, k, m, act, slope);
    }
}
