/* int8 fully connected layer (symmetric quantization, int32 sums).
   Activations travel as int16 pairs packed in 32-bit words: word i holds element 2i in its low half and 2i+1 in its
   high half. Weights are int8, four to a 32-bit word, in blocks of 4 rows and groups of 4 inputs: word
   (blk * kp/4 + g) * 4 + r holds row blk*4+r, inputs 4g..4g+3, as bytes (w0, w2, w1, w3) from the least significant
   up, and two consecutive words share one uint64_t (the first in the low half) so that 32-bit cores fetch them with
   one LDRD. Sign-extending bytes 0 and 2, then bytes 1 and 3, gives the pairs (w0, w1) and (w2, w3) that line up
   with the activation words.
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
   the two products of the halves to the sum. (Converting an unsigned value above the signed maximum to a signed type
   is implementation-defined in C99; every two's complement compiler wraps it, which is what is wanted here.) */
#define AL_SEXT8(v) ((int32_t)(int8_t)(uint8_t)(v))
#define AL_SEXT16(v) ((int32_t)(int16_t)(uint16_t)(v))
#define AL_LO_PAIR(w) (((uint32_t)AL_SEXT8(w) & 0xffffu) | ((uint32_t)AL_SEXT8((w) >> 16) << 16))
#define AL_HI_PAIR(w) (((uint32_t)AL_SEXT8((w) >> 8) & 0xffffu) | ((uint32_t)AL_SEXT8((w) >> 24) << 16))
#define AL_DOT2(pair, xw, acc) \
    ((acc) + AL_SEXT16(pair) * AL_SEXT16(xw) + AL_SEXT16((pair) >> 16) * AL_SEXT16((xw) >> 16))
#endif

/* GCC's scheduler before register allocation hoists the weight loads of the inner loop ahead of their uses;
   on an in-order Cortex-M that gains nothing and spills the sums to the stack, so it is switched off for the
   int8 layer (an optimisation hint only; the results do not change). */
#if defined(__GNUC__) && !defined(__clang__) && defined(__ARM_FEATURE_SIMD32)
#define AL_NO_PRESCHEDULE __attribute__((optimize("no-schedule-insns")))
#else
#define AL_NO_PRESCHEDULE
#endif

/* Round v / scale (given inv_scale = 1 / scale) to the nearest integer, ties away from zero, clamped to [-127, 127]. */
static int32_t al_quantize_one(float v, float inv_scale)
{
    const float t = v * inv_scale;
    const float a = fabsf(t) < 127.0f ? fabsf(t) : 127.0f; /* NaN gives 127 too */
    const int32_t q = (int32_t)(a + 0.5f); /* the cast truncates */
    return t < 0.0f ? -q : q;
}

static uint32_t al_pack_pair(int32_t lo, int32_t hi)
{
    return ((uint32_t)lo & 0xffffu) | ((uint32_t)hi << 16);
}

/* Quantize k floats into kp/2 pair words (kp >= k, even); the padding is zero. */
static void al_quantize_q8(const float *x, uint32_t *q, int k, int kp, float inv_scale)
{
    int i = 0;
    for (; i + 1 < k; i += 2) {
        *q++ = al_pack_pair(al_quantize_one(x[i], inv_scale), al_quantize_one(x[i + 1], inv_scale));
    }
    if (i < k) {
        *q++ = al_pack_pair(al_quantize_one(x[i], inv_scale), 0);
        i += 2;
    }
    for (; i < kp; i += 2) {
        *q++ = 0;
    }
}

/* One group of 4 inputs (two pair words) for the 4 rows of a block: 8 SMLADs, 16 multiply-accumulates. The four
   weight words come in two 64-bit values (row 0 in the low half), which 32-bit cores load with LDRD. */
#define AL_GROUP(g)                                                     \
    do {                                                                \
        const uint32_t x01 = xp[2 * (g)], x23 = xp[2 * (g) + 1];        \
        const uint64_t w01 = w[2 * (g)], w23 = w[2 * (g) + 1];          \
        a0 = AL_DOT2(AL_LO_PAIR((uint32_t)w01), x01, a0);               \
        a0 = AL_DOT2(AL_HI_PAIR((uint32_t)w01), x23, a0);               \
        a1 = AL_DOT2(AL_LO_PAIR((uint32_t)(w01 >> 32)), x01, a1);       \
        a1 = AL_DOT2(AL_HI_PAIR((uint32_t)(w01 >> 32)), x23, a1);       \
        a2 = AL_DOT2(AL_LO_PAIR((uint32_t)w23), x01, a2);               \
        a2 = AL_DOT2(AL_HI_PAIR((uint32_t)w23), x23, a2);               \
        a3 = AL_DOT2(AL_LO_PAIR((uint32_t)(w23 >> 32)), x01, a3);       \
        a3 = AL_DOT2(AL_HI_PAIR((uint32_t)(w23 >> 32)), x23, a3);       \
    } while (0)

