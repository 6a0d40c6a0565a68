/* Quantize each of `rows` rows of k floats into kp/2 pair words (al_quantize_q8). */
AL_LAYER
static void al_quantize_rows_q8(const float *x, uint32_t *q, int rows, int k, int kp, float inv_scale)
{
    int r;
    for (r = 0; r < rows; ++r) {
        al_quantize_q8(x + r * k, q + r * (kp / 2), k, kp, inv_scale);
    }
}
