/* y = act(sum * scale[j] + b[j]) for the mp (a multiple of 16) padded rows, where sum is the int32 dot product of row
   j with the quantized input xq (kp inputs, a multiple of 16). Writes m floats to y, or, when yq is not NULL, the
   mp outputs quantized again with out_inv_scale as pair words for the next layer (padded rows give 0). */
AL_NO_PRESCHEDULE static void al_dense_row_q8(const uint32_t *xq, const uint64_t *w, const float *scale, const float *b, float *y,
                        uint32_t *yq, float out_inv_scale, int kp, int m, int mp, int act, float slope)
{
    int j;
    for (j = 0; j < mp; j += 4) {
        int32_t a0 = 0, a1 = 0, a2 = 0, a3 = 0;
        float v[4];
        int r;
        const uint32_t *xp = xq;
        const uint32_t *end = xq + kp / 2;
        while (xp != end) {
            AL_GROUP(0);
            AL_GROUP(1);
            AL_GROUP(2);
            AL_GROUP(3);
            xp += 8;
            w += 8;
        }
        v[0] = (float)a0 * scale[j];
        v[1] = (float)a1 * scale[j + 1];
        v[2] = (float)a2 * scale[j + 2];
        v[3] = (float)a3 * scale[j + 3];
        for (r = 0; r < 4; ++r) {
            if (b != NULL) {
                v[r] = v[r] + b[j + r];
            }
            v[r] = al_activate(v[r], act, slope);
        }
        if (yq != NULL) {
            yq[j / 2] = al_pack_pair(al_quantize_one(v[0], out_inv_scale), al_quantize_one(v[1], out_inv_scale));
            yq[j / 2 + 1] = al_pack_pair(al_quantize_one(v[2], out_inv_scale), al_quantize_one(v[3], out_inv_scale));
        } else {
            for (r = 0; r < 4 && j + r < m; ++r) {
                y[j + r] = v[r];
            }
        }
    }
}

/* The int8 layer on each of `rows` rows of quantized input (kp/2 words a row); row r writes m floats at y + r*m, or
   mp/2 words at yq + r*mp/2. */
AL_LAYER AL_NO_PRESCHEDULE
static void al_dense_q8(const uint32_t *xq, const uint64_t *w, const float *scale, const float *b, float *y,
                        uint32_t *yq, float out_inv_scale, int rows, int kp, int m, int mp, int act, float slope)
{
    int r;
    for (r = 0; r < rows; ++r) {
        float *yr = y != NULL ? y + r * m : NULL;
        uint32_t *yqr = yq != NULL ? yq + r * (mp / 2) : NULL;
        al_dense_row_q8(xq + r * (kp / 2), w, scale, b, yr, yqr, out_inv_scale, kp, m, mp, act, slope);
    }
}
