/* y = 1 / (1 + exp(-x)), elementwise, without overflow: with z = exp(-|x|) in (0, 1], y = 1/(1+z) for x >= 0 and
   z/(1+z) otherwise. y may be x. */
static void al_sigmoid_f32(const float *x, float *y, int n)
{
    int i;
    for (i = 0; i < n; ++i) {
        const float v = x[i];
        const float z = expf(v >= 0.0f ? -v : v);
        y[i] = (v >= 0.0f ? 1.0f : z) / (1.0f + z);
    }
}
