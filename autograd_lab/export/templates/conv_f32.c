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

/* The common first layer, a 3x3 conv (stride 1) on one channel followed by a 2x2 max pool (stride 2), computed
   directly: per pooled output, the 4x4 input tile under its four conv pixels is loaded once (zeros for padding), and
   per output channel the 9 weights are loaded once for the 36 multiply-accumulates. Each conv pixel's sum runs over
   the window in row-major order from 0, as in al_dense_f32, so the bits are those of the general path. Writes the
   pooled raw sums (no bias, no activation) for channels 0..cout-1 to out. */
static void al_conv3x3_c1_pool2(const float *x, const float *w, float *out, const al_conv_geom *g, int oy, int ox)
{
    const int k = 9, nb = g->cout / 8;
    const int iy = 2 * oy - g->py, ix = 2 * ox - g->px;
    const int inside = iy >= 0 && iy + 4 <= g->h && ix >= 0 && ix + 4 <= g->w;
    int c;
#define AL_TILE(i, j) (inside || (iy + (i) >= 0 && iy + (i) < g->h && ix + (j) >= 0 && ix + (j) < g->w) \
                       ? x[(iy + (i)) * g->sh + (ix + (j)) * g->sw] : 0.0f)
    const float t0 = AL_TILE(0, 0); const float t1 = AL_TILE(0, 1);
    const float t2 = AL_TILE(0, 2); const float t3 = AL_TILE(0, 3);
    const float t4 = AL_TILE(1, 0); const float t5 = AL_TILE(1, 1);
    const float t6 = AL_TILE(1, 2); const float t7 = AL_TILE(1, 3);
    const float t8 = AL_TILE(2, 0); const float t9 = AL_TILE(2, 1);
    const float t10 = AL_TILE(2, 2); const float t11 = AL_TILE(2, 3);
    const float t12 = AL_TILE(3, 0); const float t13 = AL_TILE(3, 1);
    const float t14 = AL_TILE(3, 2); const float t15 = AL_TILE(3, 3);
#undef AL_TILE
    for (c = 0; c < g->cout; ++c) {
        /* row c of the blocked weights: interleaved by 8 within full blocks, plain in the tail */
        const float *wr = c < nb * 8 ? w + (c / 8) * 8 * k + c % 8 : w + nb * 8 * k + (c - nb * 8) * k;
        const int st = c < nb * 8 ? 8 : 1;
        const float w0 = wr[0], w1 = wr[st], w2 = wr[2 * st], w3 = wr[3 * st], w4 = wr[4 * st];
        const float w5 = wr[5 * st], w6 = wr[6 * st], w7 = wr[7 * st], w8 = wr[8 * st];
        float s00 = 0.0f, s01 = 0.0f, s10 = 0.0f, s11 = 0.0f, best;
        AL_MAC(s00, t0, w0); AL_MAC(s01, t1, w0); AL_MAC(s10, t4, w0); AL_MAC(s11, t5, w0);
        AL_MAC(s00, t1, w1); AL_MAC(s01, t2, w1); AL_MAC(s10, t5, w1); AL_MAC(s11, t6, w1);
        AL_MAC(s00, t2, w2); AL_MAC(s01, t3, w2); AL_MAC(s10, t6, w2); AL_MAC(s11, t7, w2);
        AL_MAC(s00, t4, w3); AL_MAC(s01, t5, w3); AL_MAC(s10, t8, w3); AL_MAC(s11, t9, w3);
        AL_MAC(s00, t5, w4); AL_MAC(s01, t6, w4); AL_MAC(s10, t9, w4); AL_MAC(s11, t10, w4);
        AL_MAC(s00, t6, w5); AL_MAC(s01, t7, w5); AL_MAC(s10, t10, w5); AL_MAC(s11, t11, w5);
        AL_MAC(s00, t8, w6); AL_MAC(s01, t9, w6); AL_MAC(s10, t12, w6); AL_MAC(s11, t13, w6);
        AL_MAC(s00, t9, w7); AL_MAC(s01, t10, w7); AL_MAC(s10, t13, w7); AL_MAC(s11, t14, w7);
        AL_MAC(s00, t10, w8); AL_MAC(s01, t11, w8); AL_MAC(s10, t14, w8); AL_MAC(s11, t15, w8);
        best = s00;
        best = s01 > best ? s01 : best;
        best = s10 > best ? s10 : best;
        best = s11 > best ? s11 : best;
        out[c] = best;
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
    const int direct = g->cin == 1 && g->kh == 3 && g->kw == 3 && g->sy == 1 && g->sx == 1 && g->pkh == 2
                       && g->pkw == 2 && g->psy == 2 && g->psx == 2;
    for (oy = oy0; oy < oy1; ++oy) {
        for (ox = 0; ox < g->pw; ++ox) {
            float *out = y + ((oy - oy0) * g->pw + ox) * g->cout;
            const int n = direct ? 0 : wh * ww;
            int i;
            if (direct) {
                al_conv3x3_c1_pool2(x, w, out, g, oy, ox);
            }
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
