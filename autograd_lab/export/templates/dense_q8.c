/* int8 fully connected layer (symmetric quantization, int32 sums).
   Activations travel as int16 pairs packed in 32-bit words: word i holds element 2i in its low half and 2i+1 in its
   high half. Weights are int8, four to a word, in blocks of 4 rows and groups of 4 inputs:
   w[(blk * kp/4 + g) * 4 + r] holds row blk*4+r, inputs 4g..4g+3, as bytes (w0, w2, w1, w3), so that sign-extending
   bytes 0 and 2, then bytes 1 and 3, gives the pairs (w0, w1) and (w2, w3) that line up with the activation words.
   On cores with the DSP extension one SXTB16 and one SMLAD then do two multiply-accumulates (ACLE, arm_acle.h). */
#if defined(__ARM_FEATURE_SIMD32) && (__ARM_FEATURE_SIMD32 == 1)
#include <arm_acle.h>
#define AL_LO_PAIR(w) ((uint32_t)__sxtb16(w))
static uint32_t al_hi_pair(uint32_t w)
{
    uint32_t r;
    __asm__("sxtb16 %0, %1, ror #8" : "=r"(r) : "r"(w));
    return r;
}
#define AL_HI_PAIR(w) al_hi_pair(w)
#define AL_DOT2(pair, xw, acc) ((int32_t)__smlad((pair), (xw), (acc)))
#else
/* Portable versions of the same arithmetic: sign-extend bytes 0 and 2 (or 1 and 3) into two int16 halves, and add
   the two products of the halves to the sum. */
#define AL_SEXT8(v) ((int32_t)((v) & 0xffu) - (int32_t)(((v) & 0x80u) << 1))
#define AL_SEXT16(v) ((int32_t)((v) & 0xffffu) - (int32_t)(((v) & 0x8000u) << 1))
#define AL_LO_PAIR(w) (((uint32_t)AL_SEXT8(w) & 0xffffu) | ((uint32_t)AL_SEXT8((w) >> 16) << 16))
#define AL_HI_PAIR(w) (((uint32_t)AL_SEXT8((w) >> 8) & 0xffffu) | ((uint32_t)AL_SEXT8((w) >> 24) << 16))
#define AL_DOT2(pair, xw, acc) \
    ((acc) + AL_SEXT16(pair) * AL_SEXT16(xw) + AL_SEXT16((pair) >> 16) * AL_SEXT16((xw) >> 16))
#endif

/* Round v / scale (given inv_scale = 1 / scale) to the nearest integer, ties away from zero, clamped to [-127, 127]. */
static int32_t al_quantize_one(float v, float inv_scale)
{
    float t = v * inv_scale;
    t = t > 127.0f ? 127.0f : t;
    t = t < -127.0f ? -127.0f : t;
    return t >= 0.0f ? (int32_t)(t + 0.5f) : -(int32_t)(0.5f - t);
}

static uint32_t al_pack_pair(int32_t lo, int32_t hi)
{
    return ((uint32_t)lo & 0xffffu) | ((uint32_t)hi << 16);
}

/* Quantize k floats into kp/2 pair words (kp >= k, even); the padding is zero. */
static void al_quantize_q8(const float *x, uint32_t *q, int k, int kp, float inv_scale)
{
    int i;
    for (i = 0; i < kp; i += 2) {
        const int32_t lo = i < k ? al_quantize_one(x[i], inv_scale) : 0;
        const int32_t hi = i + 1 < k ? al_quantize_one(x[i + 1], inv_scale) : 0;
        q[i / 2] = al_pack_pair(lo, hi);
    }
}

/* y = act(sum * scale[j] + b[j]) for the mp (a multiple of 8) padded rows, where sum is the int32 dot product of row
   j with the quantized input xq (kp inputs, a multiple of 8). Writes m floats to y, or, when yq is not NULL, the
   mp outputs quantized again with out_inv_scale as pair words for the next layer (padded rows give 0). */
static void al_dense_q8(const uint32_t *xq, const uint32_t *w, const float *scale, const float *b, float *y,
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
            const uint32_t x01 = xp[0], x23 = xp[1], x45 = xp[2], x67 = xp[3];
            a0 = AL_DOT2(AL_LO_PAIR(w[0]), x01, a0);
            a0 = AL_DOT2(AL_HI_PAIR(w[0]), x23, a0);
            a1 = AL_DOT2(AL_LO_PAIR(w[1]), x01, a1);
            a1 = AL_DOT2(AL_HI_PAIR(w[1]), x23, a1);
            a2 = AL_DOT2(AL_LO_PAIR(w[2]), x01, a2);
            a2 = AL_DOT2(AL_HI_PAIR(w[2]), x23, a2);
            a3 = AL_DOT2(AL_LO_PAIR(w[3]), x01, a3);
            a3 = AL_DOT2(AL_HI_PAIR(w[3]), x23, a3);
            a0 = AL_DOT2(AL_LO_PAIR(w[4]), x45, a0);
            a0 = AL_DOT2(AL_HI_PAIR(w[4]), x67, a0);
            a1 = AL_DOT2(AL_LO_PAIR(w[5]), x45, a1);
            a1 = AL_DOT2(AL_HI_PAIR(w[5]), x67, a1);
            a2 = AL_DOT2(AL_LO_PAIR(w[6]), x45, a2);
            a2 = AL_DOT2(AL_HI_PAIR(w[6]), x67, a2);
            a3 = AL_DOT2(AL_LO_PAIR(w[7]), x45, a3);
            a3 = AL_DOT2(AL_HI_PAIR(w[7]), x67, a3);
            xp += 4;
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
