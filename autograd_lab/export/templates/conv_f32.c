/* Raw sums of four conv pixels (lanes) at once: y[l * m + j] = sum_p patch_l[p] W[j][p] for l = 0..3, with W in
   blocks of 4 rows interleaved column by column (w[blk*4*k + p*4 + r] holds W[blk*4 + r][p]), the m % 4 last rows
   plain. Lane l's patch is `rows` runs of `run` floats, run r at x[l] + r * s[l], so that a window inside the image
   is read where it lies, with no copy. The 4 x 4 sums stay in registers: per step of p, 4 input and 4 weight loads
   feed 16 multiply-accumulates (one pixel at a time, the dense kernel needs 9 loads for 8). Each sum runs over p in
   order from 0, as al_dense_f32's. */
static void al_dense4_f32(const float *const x[4], const int s[4], int rows, int run, const float *w, float *y, int m)
{
    int j = 0, r, p;
    for (; j + 4 <= m; j += 4) {
        float a0 = 0.0f, a1 = 0.0f, a2 = 0.0f, a3 = 0.0f, b0 = 0.0f, b1 = 0.0f, b2 = 0.0f, b3 = 0.0f;
        float c0 = 0.0f, c1 = 0.0f, c2 = 0.0f, c3 = 0.0f, d0 = 0.0f, d1 = 0.0f, d2 = 0.0f, d3 = 0.0f;
        for (r = 0; r < rows; ++r) {
            const float *x0 = x[0] + r * s[0], *x1 = x[1] + r * s[1], *x2 = x[2] + r * s[2], *x3 = x[3] + r * s[3];
            for (p = 0; p < run; ++p) {
                const float u0 = x0[p], u1 = x1[p], u2 = x2[p], u3 = x3[p];
                float wv;
                wv = w[0]; AL_MAC(a0, u0, wv); AL_MAC(b0, u1, wv); AL_MAC(c0, u2, wv); AL_MAC(d0, u3, wv);
                wv = w[1]; AL_MAC(a1, u0, wv); AL_MAC(b1, u1, wv); AL_MAC(c1, u2, wv); AL_MAC(d1, u3, wv);
                wv = w[2]; AL_MAC(a2, u0, wv); AL_MAC(b2, u1, wv); AL_MAC(c2, u2, wv); AL_MAC(d2, u3, wv);
                wv = w[3]; AL_MAC(a3, u0, wv); AL_MAC(b3, u1, wv); AL_MAC(c3, u2, wv); AL_MAC(d3, u3, wv);
                w += 4;
            }
        }
        y[j] = a0; y[j + 1] = a1; y[j + 2] = a2; y[j + 3] = a3;
        y[m + j] = b0; y[m + j + 1] = b1; y[m + j + 2] = b2; y[m + j + 3] = b3;
        y[2 * m + j] = c0; y[2 * m + j + 1] = c1; y[2 * m + j + 2] = c2; y[2 * m + j + 3] = c3;
        y[3 * m + j] = d0; y[3 * m + j + 1] = d1; y[3 * m + j + 2] = d2; y[3 * m + j + 3] = d3;
    }
    for (; j < m; ++j) {
        float a = 0.0f, b = 0.0f, c = 0.0f, d = 0.0f;
        for (r = 0; r < rows; ++r) {
            const float *x0 = x[0] + r * s[0], *x1 = x[1] + r * s[1], *x2 = x[2] + r * s[2], *x3 = x[3] + r * s[3];
            for (p = 0; p < run; ++p) {
                AL_MAC(a, x0[p], w[p]);
                AL_MAC(b, x1[p], w[p]);
                AL_MAC(c, x2[p], w[p]);
                AL_MAC(d, x3[p], w[p]);
            }
            w += run;
        }
        y[j] = a;
        y[m + j] = b;
        y[2 * m + j] = c;
        y[3 * m + j] = d;
    }
}

/* The receptive field of conv pixel (oy, ox) as kh runs of kw * cin floats, run i at the returned pointer + i *
   *stride: the input itself when the window lies inside the image and each of its rows is one contiguous run
   (channels last, or a single channel), else the window gathered into patch by al_patch_f32 (zeros for padding). */
static const float *al_window_f32(const float *x, float *patch, const al_conv_geom *g, int oy, int ox, int *stride)
{
    const int runs = (g->cin == 1 && g->sw == 1) || (g->sc == 1 && g->sw == g->cin);
    const int iy = oy * g->sy - g->py, ix = ox * g->sx - g->px;
    if (runs && iy >= 0 && iy + g->kh <= g->h && ix >= 0 && ix + g->kw <= g->w) {
        *stride = g->sh;
        return x + iy * g->sh + ix * g->sw;
    }
    al_patch_f32(x, patch, g, oy, ox);
    *stride = g->kw * g->cin;
    return patch;
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
                /* the pool's maximum first, then bias and activation once: the same bits, as both are monotonic
                   (the lowering fuses a pool only with a ReLU or a leaky ReLU of slope >= 0) */
                best = s00;
                best = s01 > best ? s01 : best;
                best = s10 > best ? s10 : best;
                best = s11 > best ? s11 : best;
                out[c] = al_activate(b != NULL ? best + b[c] : best, act, slope);
            }
        }
    }
}

/* Channels c0 <= c < cout of one depthwise output pixel whose window starts at input (iy, ix), taps in the
   padding skipped (al_dwconv_f32's layout): four channels at a time, then one. */
static void al_dw_pixel_f32(const float *x, const float *w, float *out, const al_conv_geom *g, int iy, int ix, int c0)
{
    const int m = g->cout;
    const int i0 = iy < 0 ? -iy : 0, i1 = iy + g->kh > g->h ? g->h - iy : g->kh;
    const int j0 = ix < 0 ? -ix : 0, j1 = ix + g->kw > g->w ? g->w - ix : g->kw;
    int c = c0, i, j;
    for (; c + 4 <= m; c += 4) {
        float a0 = 0.0f, a1 = 0.0f, a2 = 0.0f, a3 = 0.0f;
        for (i = i0; i < i1; ++i) {
            const float *xr = x + (iy + i) * g->sh + (ix + j0) * g->sw + c;
            const float *wt = w + (i * g->kw + j0) * m + c;
            for (j = j0; j < j1; ++j, xr += g->sw, wt += m) {
                AL_MAC(a0, xr[0], wt[0]);
                AL_MAC(a1, xr[1], wt[1]);
                AL_MAC(a2, xr[2], wt[2]);
                AL_MAC(a3, xr[3], wt[3]);
            }
        }
        out[c] = a0; out[c + 1] = a1; out[c + 2] = a2; out[c + 3] = a3;
    }
    for (; c < m; ++c) {
        float a = 0.0f;
        for (i = i0; i < i1; ++i) {
            for (j = j0; j < j1; ++j) {
                AL_MAC(a, x[(iy + i) * g->sh + (ix + j) * g->sw + c], w[(i * g->kw + j) * m + c]);
            }
        }
        out[c] = a;
    }
}

/* Depthwise conv (groups = cin = cout) on channels-last input, no fused pool (g->direct == 2): weights w as kh*kw
   rows of cout values (tap-major, so that a tap's channels are adjacent, as the input's are). Four neighbouring
   output pixels x four channels at a time, 16 sums in registers: per tap 4 weight and 16 input loads feed 16
   multiply-accumulates, for each run of four pixels whose windows lie inside the image. Other pixels (and the
   channels past a multiple of 4) go one pixel at a time (al_dw_pixel_f32), skipping the taps in the padding. Each sum runs over the taps in row-major order
   from 0, as al_dense4_f32's (a skipped padding tap would add a zero product, which changes no sum). Then bias and activation.
   Computes output rows oy0 <= oy < oy1 into y. */
static void al_dwconv_f32(const float *x, const float *w, const float *b, float *y, const al_conv_geom *g, int act,
                          float slope, int oy0, int oy1)
{
    const int m = g->cout, sx = g->sx * g->sw;
    int oy, ox, c, i, j, l, n;
    for (oy = oy0; oy < oy1; ++oy) {
        const int iy = oy * g->sy - g->py;
        const int rows_in = iy >= 0 && iy + g->kh <= g->h;
        for (ox = 0; ox < g->ow; ox += n) {
            const int ix = ox * g->sx - g->px;
            float *out = y + ((oy - oy0) * g->ow + ox) * m;
            c = 0;
            n = 1;
            if (rows_in && ix >= 0 && ox + 4 <= g->ow && ix + 3 * g->sx + g->kw <= g->w) {
                /* four pixels whose windows lie inside the image (the groups start at the first such pixel) */
                n = 4;
                for (; c + 4 <= m; c += 4) {
                    float a0 = 0.0f, a1 = 0.0f, a2 = 0.0f, a3 = 0.0f, b0 = 0.0f, b1 = 0.0f, b2 = 0.0f, b3 = 0.0f;
                    float c0 = 0.0f, c1 = 0.0f, c2 = 0.0f, c3 = 0.0f, d0 = 0.0f, d1 = 0.0f, d2 = 0.0f, d3 = 0.0f;
                    const float *wt = w + c;
                    for (i = 0; i < g->kh; ++i) {
                        const float *xr = x + (iy + i) * g->sh + ix * g->sw + c;
                        for (j = 0; j < g->kw; ++j, xr += g->sw, wt += m) {
                            const float w0 = wt[0], w1 = wt[1], w2 = wt[2], w3 = wt[3];
                            const float *p = xr;
                            AL_MAC(a0, p[0], w0); AL_MAC(a1, p[1], w1); AL_MAC(a2, p[2], w2); AL_MAC(a3, p[3], w3);
                            p += sx;
                            AL_MAC(b0, p[0], w0); AL_MAC(b1, p[1], w1); AL_MAC(b2, p[2], w2); AL_MAC(b3, p[3], w3);
                            p += sx;
                            AL_MAC(c0, p[0], w0); AL_MAC(c1, p[1], w1); AL_MAC(c2, p[2], w2); AL_MAC(c3, p[3], w3);
                            p += sx;
                            AL_MAC(d0, p[0], w0); AL_MAC(d1, p[1], w1); AL_MAC(d2, p[2], w2); AL_MAC(d3, p[3], w3);
                        }
                    }
                    out[c] = a0; out[c + 1] = a1; out[c + 2] = a2; out[c + 3] = a3;
                    out[m + c] = b0; out[m + c + 1] = b1; out[m + c + 2] = b2; out[m + c + 3] = b3;
                    out[2 * m + c] = c0; out[2 * m + c + 1] = c1; out[2 * m + c + 2] = c2; out[2 * m + c + 3] = c3;
                    out[3 * m + c] = d0; out[3 * m + c + 1] = d1; out[3 * m + c + 2] = d2; out[3 * m + c + 3] = d3;
                }
            }
            for (l = 0; l < n; ++l) {
                al_dw_pixel_f32(x, w, out + l * m, g, iy, ix + l * g->sx, c);
                if (b != NULL || act != 0) {
                    al_bias_activate(out + l * m, b, m, act, slope);
                }
            }
        }
    }
}

/* One group of a conv (all of it when groups == 1): g describes the group (its cin and cout channels, read from x
   already offset to the group's first input channel), w its cout rows in al_dense4_f32's blocks, b its biases (may
   be NULL); output pixels of y are ys floats apart (the whole layer's cout), y offset to the group's first channel.
   Four conv pixels at a time go through al_dense4_f32: with a fused max pool, four positions of the pool window,
   whose largest sum is kept; without one, four neighbouring output pixels of a row. A short last group repeats its
   last pixel (the repeat changes neither a maximum nor an output). Then the bias is added and the activation
   applied once per output; taking the maximum before them gives the same bits as after them, because rounding
   x + b and the activation are monotonic (the lowering fuses a pool only with a ReLU or a leaky ReLU of slope >= 0).
   patch holds 4 patches of kh*kw*cin floats (for windows that overlap the padding), sums 4 * cout floats. */
static void al_conv_group_f32(const float *x, const float *w, const float *b, float *y, int ys, float *patch,
                              float *sums, const al_conv_geom *g, int act, float slope, int oy0, int oy1)
{
    const int k = g->kh * g->kw * g->cin, m = g->cout;
    const int pool = g->pkh > 0;
    /* lanes per output pixel: the pool window's positions, or the pixel alone */
    const int n = pool ? g->pkh * g->pkw : 1;
    int oy, ox, c, i, l;
    for (oy = oy0; oy < oy1; ++oy) {
        for (ox = 0; ox < g->pw; ox += pool ? 1 : 4) {
            float *out = y + ((oy - oy0) * g->pw + ox) * ys;
            for (i = 0; i < n; i += 4) {
                const float *xs[4];
                int st[4];
                for (l = 0; l < 4; ++l) {
                    /* conv pixel of lane l: window position i + l of the pool, or output pixel ox + l */
                    const int t = pool ? (i + l < n ? i + l : n - 1) : 0;
                    const int cy = pool ? oy * g->psy + t / g->pkw : oy;
                    const int cx = pool ? ox * g->psx + t % g->pkw : (ox + l < g->pw ? ox + l : g->pw - 1);
                    xs[l] = al_window_f32(x, patch + l * k, g, cy, cx, &st[l]);
                }
                al_dense4_f32(xs, st, g->kh, g->kw * g->cin, w, sums, m);
                if (pool) {
                    /* the window's maximum so far; bias and activation after its last group */
                    const float *s0 = sums, *s1 = sums + m, *s2 = sums + 2 * m, *s3 = sums + 3 * m;
                    for (c = 0; c < m; ++c) {
                        float best = s0[c];
                        best = s1[c] > best ? s1[c] : best;
                        best = s2[c] > best ? s2[c] : best;
                        best = s3[c] > best ? s3[c] : best;
                        out[c] = i == 0 || best > out[c] ? best : out[c];
                    }
                    if (i + 4 >= n && (b != NULL || act != 0)) {
                        al_bias_activate(out, b, m, act, slope);
                    }
                } else {
                    for (l = 0; l < 4 && ox + l < g->pw; ++l) {
                        for (c = 0; c < m; ++c) {
                            out[l * ys + c] = sums[l * m + c];
                        }
                        if (b != NULL || act != 0) {
                            al_bias_activate(out + l * ys, b, m, act, slope);
                        }
                    }
                }
            }
        }
    }
}

/* 2-D convolution (cross-correlation, as the frameworks compute it) with its epilogue, in g->groups groups (0 or 1:
   one): group q reads input channels [q * cin / G, (q + 1) * cin / G) and writes output channels
   [q * cout / G, (q + 1) * cout / G) (G = cin = cout is the depthwise conv). Weights w: per group, its cout / G rows
   of kh*kw*(cin / G) values in patch order, in al_dense4_f32's blocks of 4 rows; b (may be NULL) cout biases.
   Each group is computed by al_conv_group_f32 on a copy of the geometry restricted to it.
   Computes output rows oy0 <= oy < oy1 (0 and ph for the whole layer) into y, channels last. patch holds 4 patches
   of kh*kw*cin/G floats, sums 4 * cout / G floats; a layer marked g->direct 1 goes to al_conv3x3_pool2_f32 instead
   (its weights are plain rows), 2 to al_dwconv_f32 (its weights tap-major); neither needs the buffers. */
AL_LAYER
static void al_conv_f32(const float *x, const float *w, const float *b, float *y, float *patch, float *sums,
                        const al_conv_geom *g, int act, float slope, int oy0, int oy1)
{
    const int groups = g->groups > 1 ? g->groups : 1;
    al_conv_geom part = *g;
    int q;
    if (g->direct == 1) {
        al_conv3x3_pool2_f32(x, w, b, y, g, act, slope, oy0, oy1);
        return;
    }
    if (g->direct == 2) {
        al_dwconv_f32(x, w, b, y, g, act, slope, oy0, oy1);
        return;
    }
    part.cin = g->cin / groups;
    part.cout = g->cout / groups;
    for (q = 0; q < groups; ++q) {
        al_conv_group_f32(x + q * part.cin * g->sc, w + q * part.cout * part.kh * part.kw * part.cin,
                          b != NULL ? b + q * part.cout : NULL, y + q * part.cout, g->cout, patch, sums, &part,
                          act, slope, oy0, oy1);
    }
}
