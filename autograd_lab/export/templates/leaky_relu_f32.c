/* y = x for x > 0, slope * x otherwise, elementwise; y may be x. */
static void al_leaky_relu_f32(const float *x, float *y, int n, float slope)
{
    int i;
    for (i = 0; i < n; ++i) {
        y[i] = x[i] > 0.0f ? x[i] : x[i] * slope;
    }
}
