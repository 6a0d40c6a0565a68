/* y = tanh(x), elementwise; y may be x. */
static void al_tanh_f32(const float *x, float *y, int n)
{
    int i;
    for (i = 0; i < n; ++i) {
        y[i] = tanhf(x[i]);
    }
}
