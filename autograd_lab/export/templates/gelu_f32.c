/* GELU, tanh form (Hendrycks & Gimpel 2016, eq. 2), in GELUOp's order of operations:
   y = x * (0.5 * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3)))), with tanh(u) = 1 - 2 / (exp(2u) + 1) (al_exp_f32;
   exact to about 1e-7 absolute, which is what 1 + tanh needs). y may be x. */
AL_LAYER
static void al_gelu_f32(const float *x, float *y, int n)
{
    int i;
    for (i = 0; i < n; ++i) {
        const float v = x[i];
        const float u = 0.797884583f * (v + 0.0447149985f * v * v * v);
        const float t = 1.0f - 2.0f / (al_exp_f32(u + u) + 1.0f);
        y[i] = v * (0.5f * (1.0f + t));
    }
}
