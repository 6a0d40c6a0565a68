/* Sum_p A[i][p] B[p][j] over p = 0, 1, ..., k-1 in order, from 0, for one output (the edges of al_bmm_f32). */
static float al_dot_f32(const float *a, int sa, const float *b, int sb, int k)
{
    float acc = 0.0f;
    int p;
    for (p = 0; p < k; ++p) {
        AL_MAC(acc, a[p * sa], b[p * sb]);
    }
    return acc;
}

/* Batched matrix product: for q < batch, Y[q] = alpha * (A[q] B[q]) with A[q] n x k and B[q] k x m, every operand
   read or written through element strides: A[q][i][p] = a[q*sab + i*sa0 + p*sa1], B[q][p][j] = b[q*sbb + p*sb0 +
   j*sb1], Y[q][i][j] = y[q*syb + i*sy0 + j*sy1]. So the heads of attention are read where they lie in the fused
   projection, K^T is K read with swapped strides, and P V can be written with the heads side by side. Tiles of 4 x 4
   outputs: per step of p, 4 + 4 loads feed 16 multiply-accumulates, with the 16 sums in registers. Each sum runs
   over p in order from 0 and is multiplied by alpha once at the end (the 1/sqrt(d) of attention). */
AL_LAYER
static void al_bmm_f32(const float *a, const float *b, float *y, float alpha, int batch, int n, int k, int m,
                       int sab, int sa0, int sa1, int sbb, int sb0, int sb1, int syb, int sy0, int sy1)
{
    int q, i, j, p, r, c;
    for (q = 0; q < batch; ++q) {
        const float *aq = a + q * sab;
        const float *bq = b + q * sbb;
        float *yq = y + q * syb;
        for (i = 0; i < n; i += 4) {
            for (j = 0; j < m; j += 4) {
                const float *a0 = aq + i * sa0, *a1 = a0 + sa0, *a2 = a1 + sa0, *a3 = a2 + sa0;
                const float *b0 = bq + j * sb1, *b1 = b0 + sb1, *b2 = b1 + sb1, *b3 = b2 + sb1;
                float s[4][4];
                if (i + 4 > n || j + 4 > m) { /* a tile at the edge: one output at a time */
                    for (r = 0; r < 4 && i + r < n; ++r) {
                        for (c = 0; c < 4 && j + c < m; ++c) {
                            yq[(i + r) * sy0 + (j + c) * sy1] =
                                al_dot_f32(aq + (i + r) * sa0, sa1, bq + (j + c) * sb1, sb0, k) * alpha;
                        }
                    }
                    continue;
                }
                {
                    float c00 = 0.0f, c01 = 0.0f, c02 = 0.0f, c03 = 0.0f, c10 = 0.0f, c11 = 0.0f, c12 = 0.0f;
                    float c13 = 0.0f, c20 = 0.0f, c21 = 0.0f, c22 = 0.0f, c23 = 0.0f, c30 = 0.0f, c31 = 0.0f;
                    float c32 = 0.0f, c33 = 0.0f;
                    for (p = 0; p < k; ++p) {
                        const float x0 = *a0, x1 = *a1, x2 = *a2, x3 = *a3;
                        const float w0 = *b0, w1 = *b1, w2 = *b2, w3 = *b3;
                        AL_MAC(c00, x0, w0); AL_MAC(c01, x0, w1); AL_MAC(c02, x0, w2); AL_MAC(c03, x0, w3);
                        AL_MAC(c10, x1, w0); AL_MAC(c11, x1, w1); AL_MAC(c12, x1, w2); AL_MAC(c13, x1, w3);
                        AL_MAC(c20, x2, w0); AL_MAC(c21, x2, w1); AL_MAC(c22, x2, w2); AL_MAC(c23, x2, w3);
                        AL_MAC(c30, x3, w0); AL_MAC(c31, x3, w1); AL_MAC(c32, x3, w2); AL_MAC(c33, x3, w3);
                        a0 += sa1; a1 += sa1; a2 += sa1; a3 += sa1;
                        b0 += sb0; b1 += sb0; b2 += sb0; b3 += sb0;
                    }
                    s[0][0] = c00; s[0][1] = c01; s[0][2] = c02; s[0][3] = c03;
                    s[1][0] = c10; s[1][1] = c11; s[1][2] = c12; s[1][3] = c13;
                    s[2][0] = c20; s[2][1] = c21; s[2][2] = c22; s[2][3] = c23;
                    s[3][0] = c30; s[3][1] = c31; s[3][2] = c32; s[3][3] = c33;
                }
                for (r = 0; r < 4; ++r) {
                    for (c = 0; c < 4; ++c) {
                        yq[(i + r) * sy0 + (j + c) * sy1] = s[r][c] * alpha;
                    }
                }
            }
        }
    }
}
