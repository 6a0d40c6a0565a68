/* Layer normalisation of each of `rows` rows of n values: y = (x - mean) / sqrt(var + eps) * gamma + beta, with the
   variance of the centred values (two passes); gamma and beta may be NULL. y may be x. */
AL_LAYER
static void al_layer_norm_f32(const float *x, const float *gamma, const float *beta, float *y, int rows, int n,
                              float eps)
{
    int r, j;
    for (r = 0; r < rows; ++r) {
        const float *xr = x + r * n;
        float *yr = y + r * n;
        float mean = 0.0f, var = 0.0f, rstd;
        for (j = 0; j < n; ++j) {
            mean += xr[j];
        }
        mean = mean / (float)n;
        for (j = 0; j < n; ++j) {
            const float c = xr[j] - mean;
            var += c * c;
        }
        var = var / (float)n;
        rstd = 1.0f / sqrtf(var + eps);
        for (j = 0; j < n; ++j) {
            float v = (xr[j] - mean) * rstd;
            if (gamma != NULL) {
                v = v * gamma[j];
            }
            if (beta != NULL) {
                v = v + beta[j];
            }
            yr[j] = v;
        }
    }
}
