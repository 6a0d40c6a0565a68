/* Raw sums of two inputs at once, y0[j] = sum_p x0[p] W[j][p] and y1[j] likewise for x1, with W in the layout of
   al_dense_f32: each weight is loaded once for two multiply-accumulates, and each sum runs over p in order, so every
   y0[j] has the bits al_dense_f32 (without bias and activation) gives. */
static void al_dense2_f32(const float *x0, const float *x1, const float *w, float *y0, float *y1, int k, int m)
{
    int j = 0, p;
    for (; j + 8 <= m; j += 8) {
        float a0 = 0.0f, a1 = 0.0f, a2 = 0.0f, a3 = 0.0f, a4 = 0.0f, a5 = 0.0f, a6 = 0.0f, a7 = 0.0f;
        float c0 = 0.0f, c1 = 0.0f, c2 = 0.0f, c3 = 0.0f, c4 = 0.0f, c5 = 0.0f, c6 = 0.0f, c7 = 0.0f;
        for (p = 0; p < k; ++p) {
            const float u = x0[p], v = x1[p];
            float wv;
            wv = w[0]; AL_MAC(a0, u, wv); AL_MAC(c0, v, wv);
            wv = w[1]; AL_MAC(a1, u, wv); AL_MAC(c1, v, wv);
            wv = w[2]; AL_MAC(a2, u, wv); AL_MAC(c2, v, wv);
            wv = w[3]; AL_MAC(a3, u, wv); AL_MAC(c3, v, wv);
            wv = w[4]; AL_MAC(a4, u, wv); AL_MAC(c4, v, wv);
            wv = w[5]; AL_MAC(a5, u, wv); AL_MAC(c5, v, wv);
            wv = w[6]; AL_MAC(a6, u, wv); AL_MAC(c6, v, wv);
            wv = w[7]; AL_MAC(a7, u, wv); AL_MAC(c7, v, wv);
            w += 8;
        }
        y0[j] = a0; y0[j + 1] = a1; y0[j + 2] = a2; y0[j + 3] = a3;
        y0[j + 4] = a4; y0[j + 5] = a5; y0[j + 6] = a6; y0[j + 7] = a7;
        y1[j] = c0; y1[j + 1] = c1; y1[j + 2] = c2; y1[j + 3] = c3;
        y1[j + 4] = c4; y1[j + 5] = c5; y1[j + 6] = c6; y1[j + 7] = c7;
    }
    for (; j < m; ++j) {
        float a = 0.0f, c = 0.0f;
        for (p = 0; p < k; ++p) {
            AL_MAC(a, x0[p], w[p]);
            AL_MAC(c, x1[p], w[p]);
        }
        w += k;
        y0[j] = a;
        y1[j] = c;
    }
}

/* 2-D convolution (cross-correlation, as the frameworks compute it) with its epilogue: per conv pixel, gather the
   patch and run al_dense_f32 on it (weights w: cout rows of kh*kw*cin values in patch order, in the dense kernel's
   blocked layout) for the raw sums; with a fused max pool, keep the largest sum of each pool window; then add the
   bias b (may be NULL) and apply the activation once per output. Taking the maximum before the bias and the
   activation gives the same bits as after them, because rounding x + b and the activation are monotonic.
   Two window positions are computed together (al_dense2_f32), so each weight is read once for two MACs.
   Computes output rows oy0 <= oy < oy1 (0 and ph for the whole layer) into y, channels last. patch and patch2
   hold kh*kw*cin floats, pixel and pixel2 cout floats. */
AL_LAYER
static void al_conv_f32(const float *x, const float *w, const float *b, float *y, float *patch, float *patch2,
                        float *pixel, float *pixel2, const al_conv_geom *g, int act, float slope, int oy0, int oy1)
{
    const int k = g->kh * g->kw * g->cin;
    const int pool = g->pkh > 0;
    const int wh = pool ? g->pkh : 1, ww = pool ? g->pkw : 1;
    const int sy = pool ? g->psy : 1, sx = pool ? g->psx : 1;
    int oy, ox, c;
    for (oy = oy0; oy < oy1; ++oy) {
        for (ox = 0; ox < g->pw; ++ox) {
            float *out = y + ((oy - oy0) * g->pw + ox) * g->cout;
            const int n = wh * ww;
            int i;
            /* window positions two at a time (al_dense2_f32), the last one alone when n is odd */
            for (i = 0; i < n; i += 2) {
                float *first_out = i == 0 ? out : pixel;
                al_patch_f32(x, patch, g, oy * sy + i / ww, ox * sx + i % ww);
                if (i + 1 < n) {
                    al_patch_f32(x, patch2, g, oy * sy + (i + 1) / ww, ox * sx + (i + 1) % ww);
                    al_dense2_f32(patch, patch2, w, first_out, pixel2, k, g->cout);
                } else {
                    al_dense_f32(patch, w, NULL, first_out, k, g->cout, 0, 0.0f);
                }
                for (c = 0; c < g->cout; ++c) {
                    float best = i == 0 ? out[c] : (pixel[c] > out[c] ? pixel[c] : out[c]);
                    if (i + 1 < n) {
                        best = pixel2[c] > best ? pixel2[c] : best;
                    }
                    out[c] = best;
                }
            }
            if (b != NULL || act != 0) {
                al_bias_activate(out, b, g->cout, act, slope);
            }
        }
    }
}
