/* General matrix product y = A B with A n x k, B k x m, y n x m row-major; A[i][p] is a[i*sa0 + p*sa1] and
   B[p][j] is b[p*sb0 + j*sb1], so the strides express either transpose without copying. Sums run over p in order. */
static void al_matmul_f32(const float *a, int sa0, int sa1, const float *b, int sb0, int sb1, float *y,
                          int n, int k, int m)
{
    int i, j, p;
    for (i = 0; i < n; ++i) {
        for (j = 0; j < m; ++j) {
            float acc = 0.0f;
            for (p = 0; p < k; ++p) {
                AL_MAC(acc, a[i * sa0 + p * sa1], b[p * sb0 + j * sb1]);
            }
            y[i * m + j] = acc;
        }
    }
}
