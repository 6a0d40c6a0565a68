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

/* The common first layer, computed directly: a 3x3 conv (stride 1) on one input channel, a fused 2x2 max pool of
   stride 2, then the bias and the activation. Weights w: cout rows of 9, the window in row-major order (plain rows,
   not the dense kernel's blocks: each channel's 9 weights are loaded once, at fixed offsets from one pointer).
   Per pooled output, the 4x4 input tile under its four conv pixels is loaded once into registers (zeros where it
   overlaps the padding; only tiles at the image border pay for the bounds checks), then per output channel 36
   multiply-accumulates, the maximum of the four sums, the bias and the activation, all in registers: the loop is
   short (9 weights), so the overhead per channel is what this kernel is about.
   Each conv pixel's sum runs over the window in row-major order, starting from the first product. The input has one
   channel, so its pixels are adjacent whatever the layout (g->sw == 1, checked by the lowering). Computes output
   rows oy0 <= oy < oy1 into y, channels last. */
static void al_conv3x3_pool2_f32(const float *x, const float *w, const float *b, float *y, const al_conv_geom *g,
                                 int act, float slope, int oy0, int oy1)
{
    const int sh = g->sh;
    int oy, ox, c;
    for (oy = oy0; oy < oy1; ++oy) {
        const int iy = 2 * oy - g->py;
        for (ox = 0; ox < g->pw; ++ox) {
            const int ix = 2 * ox - g->px;
            float *out = y + ((oy - oy0) * g->pw + ox) * g->cout;
            const float *wc = w;
            float t0, t1, t2, t3, t4, t5, t6, t7, t8, t9, t10, t11, t12, t13, t14, t15;
            if (iy >= 0 && iy + 4 <= g->h && ix >= 0 && ix + 4 <= g->w) {
                /* inside the image: four rows of four adjacent pixels */
                const float *r = x + iy * sh + ix;
                t0 = r[0]; t1 = r[1]; t2 = r[2]; t3 = r[3];
                r += sh;
                t4 = r[0]; t5 = r[1]; t6 = r[2]; t7 = r[3];
                r += sh;
                t8 = r[0]; t9 = r[1]; t10 = r[2]; t11 = r[3];
                r += sh;
                t12 = r[0]; t13 = r[1]; t14 = r[2]; t15 = r[3];
            } else {
#define AL_TILE(i, j) (iy + (i) >= 0 && iy + (i) < g->h && ix + (j) >= 0 && ix + (j) < g->w \
                       ? x[(iy + (i)) * sh + ix + (j)] : 0.0f)
                t0 = AL_TILE(0, 0); t1 = AL_TILE(0, 1); t2 = AL_TILE(0, 2); t3 = AL_TILE(0, 3);
                t4 = AL_TILE(1, 0); t5 = AL_TILE(1, 1); t6 = AL_TILE(1, 2); t7 = AL_TILE(1, 3);
                t8 = AL_TILE(2, 0); t9 = AL_TILE(2, 1); t10 = AL_TILE(2, 2); t11 = AL_TILE(2, 3);
                t12 = AL_TILE(3, 0); t13 = AL_TILE(3, 1); t14 = AL_TILE(3, 2); t15 = AL_TILE(3, 3);
#undef AL_TILE
            }
            for (c = 0; c < g->cout; ++c, wc += 9) {
                /* the sums of the conv pixels (0, 0), (0, 1), (1, 0) and (1, 1) of the pool window, one weight at a
                   time so that only one weight is live: 16 tile values, 4 sums and 1 weight fit the FPU's 32
                   registers */
                float wv = wc[0];
                float s00 = t0 * wv, s01 = t1 * wv, s10 = t4 * wv, s11 = t5 * wv, best;
                wv = wc[1]; AL_MAC(s00, t1, wv); AL_MAC(s01, t2, wv); AL_MAC(s10, t5, wv); AL_MAC(s11, t6, wv);
                wv = wc[2]; AL_MAC(s00, t2, wv); AL_MAC(s01, t3, wv); AL_MAC(s10, t6, wv); AL_MAC(s11, t7, wv);
                wv = wc[3]; AL_MAC(s00, t4, wv); AL_MAC(s01, t5, wv); AL_MAC(s10, t8, wv); AL_MAC(s11, t9, wv);
                wv = wc[4]; AL_MAC(s00, t5, wv); AL_MAC(s01, t6, wv); AL_MAC(s10, t9, wv); AL_MAC(s11, t10, wv);
                wv = wc[5]; AL_MAC(s00, t6, wv); AL_MAC(s01, t7, wv); AL_MAC(s10, t10, wv); AL_MAC(s11, t11, wv);
                wv = wc[6]; AL_MAC(s00, t8, wv); AL_MAC(s01, t9, wv); AL_MAC(s10, t12, wv); AL_MAC(s11, t13, wv);
                wv = wc[7]; AL_MAC(s00, t9, wv); AL_MAC(s01, t10, wv); AL_MAC(s10, t13, wv); AL_MAC(s11, t14, wv);
                wv = wc[8]; AL_MAC(s00, t10, wv); AL_MAC(s01, t11, wv); AL_MAC(s10, t14, wv); AL_MAC(s11, t15, wv);
                /* the pool's maximum first, then bias and activation once (both monotonic: same bits) */
                best = s00;
                best = s01 > best ? s01 : best;
                best = s10 > best ? s10 : best;
                best = s11 > best ? s11 : best;
                out[c] = al_activate(b != NULL ? best + b[c] : best, act, slope);
            }
        }
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
    if (g->direct) {
        al_conv3x3_pool2_f32(x, w, b, y, g, act, slope, oy0, oy1);
        return;
    }
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
