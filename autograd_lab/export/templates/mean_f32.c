/* Mean over the middle axis of an outer x n x inner array: y[o][i] = (sum_j x[o][j][i]) / n, the sum in order of j
   (e.g. the mean of the tokens of a transformer, outer 1, n tokens, inner the width). */
AL_LAYER
static void al_mean_f32(const float *x, float *y, int outer, int n, int inner)
{
    int o, i, j;
    for (o = 0; o < outer; ++o) {
        for (i = 0; i < inner; ++i) {
            float sum = 0.0f;
            for (j = 0; j < n; ++j) {
                sum += x[(o * n + j) * inner + i];
            }
            y[o * inner + i] = sum / (float)n;
        }
    }
}
