/* y = a + b (al_add_f32) or y = a * b (al_mul_f32) with broadcasting over a 3-D index space n0 x n1 x n2 (y
   contiguous); an operand's stride is 0 along an axis it is broadcast over. y may be a when a is not broadcast. */
#define AL_BROADCAST_F32(name, op)                                                                              \
    AL_LAYER static void name(const float *a, int a0, int a1, int a2, const float *b, int b0, int b1, int b2,     \
                              float *y, int n0, int n1, int n2)                                                 \
    {                                                                                                           \
        int i, j, l;                                                                                            \
        for (i = 0; i < n0; ++i) {                                                                              \
            for (j = 0; j < n1; ++j) {                                                                          \
                for (l = 0; l < n2; ++l) {                                                                      \
                    *y++ = a[i * a0 + j * a1 + l * a2] op b[i * b0 + j * b1 + l * b2];                          \
                }                                                                                               \
            }                                                                                                   \
        }                                                                                                       \
    }
