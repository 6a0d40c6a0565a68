/* y = max(x, 0), elementwise; y may be x. */
static void al_relu_f32(const float *x, float *y, int n)
{
    int i;
    for (i = 0; i < n; ++i) {
        y[i] = x[i] > 0.0f ? x[i] : 0.0f;
    }
}
