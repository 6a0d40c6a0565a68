/* Gather a strided view into contiguous y: y in row-major order of n0 x n1 x n2 x n3, element (i, j, l, q) read at
   x[i*s0 + j*s1 + l*s2 + q*s3] (a transpose, a slice or a patch rearrangement as an index remap). */
AL_LAYER
static void al_copy_f32(const float *x, float *y, int n0, int n1, int n2, int n3, int s0, int s1, int s2, int s3)
{
    int i, j, l, q;
    for (i = 0; i < n0; ++i) {
        for (j = 0; j < n1; ++j) {
            for (l = 0; l < n2; ++l) {
                const float *xs = x + i * s0 + j * s1 + l * s2;
                for (q = 0; q < n3; ++q) {
                    *y++ = xs[q * s3];
                }
            }
        }
    }
}
