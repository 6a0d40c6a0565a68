/* Gather the patch of conv pixel (oy, ox) from channels-last int8 activations (int16 pairs, cin even) as kp / 2
   pair words: one run of cin / 2 words per window position, zero words for padding and for the tail up to kp. */
static void al_patch_q16(const uint32_t *x, uint32_t *p, const al_conv_geom *g, int oy, int ox, int kp)
{
    const int run = g->cin / 2;
    uint32_t *end = p + kp / 2;
    int i, j, c;
    for (i = 0; i < g->kh; ++i) {
        for (j = 0; j < g->kw; ++j) {
            const int at = al_pixel_offset(g, oy, ox, i, j);
            const uint32_t *s = x + at / 2;
            for (c = 0; c < run; ++c) {
                *p++ = at < 0 ? 0u : s[c];
            }
        }
    }
    while (p != end) {
        *p++ = 0u;
    }
}

/* int8 conv: per conv pixel, the patch as int8 pairs (gathered from int8 activations xq, or from floats xf and
   quantized with in_inv_scale, round half away from zero), one al_dense_q8 (int32 sums, then float32
   sum * scale[j] + b[j] and the activation) into pixel, the fused max pool over pool windows into acc, then the
   pixel's cout values written as floats to y or, when yq is not NULL, quantized with out_inv_scale into pair words
   (cout even). fpatch (kh*kw*cin floats) is used only with float input. */
static void al_conv_q8(const float *xf, const uint32_t *xq, float in_inv_scale, const uint64_t *w, const float *scale,
                       const float *b, float *y, uint32_t *yq, float out_inv_scale, float *fpatch, uint32_t *qpatch,
                       float *pixel, float *acc, const al_conv_geom *g, int kp, int mp, int act, float slope)
{
    const int k = g->kh * g->kw * g->cin;
    const int pool = g->pkh > 0;
    const int ph = pool ? g->pkh : 1, pw = pool ? g->pkw : 1;
    const int sy = pool ? g->psy : 1, sx = pool ? g->psx : 1;
    int oy, ox, dy, dx, c;
    for (oy = 0; oy < g->ph; ++oy) {
        for (ox = 0; ox < g->pw; ++ox) {
            const int at = (oy * g->pw + ox) * g->cout;
            for (dy = 0; dy < ph; ++dy) {
                for (dx = 0; dx < pw; ++dx) {
                    if (xq != NULL) {
                        al_patch_q16(xq, qpatch, g, oy * sy + dy, ox * sx + dx, kp);
                    } else {
                        al_patch_f32(xf, fpatch, g, oy * sy + dy, ox * sx + dx);
                        al_quantize_q8(fpatch, qpatch, k, kp, in_inv_scale);
                    }
                    al_dense_q8(qpatch, w, scale, b, pixel, NULL, 0.0f, kp, g->cout, mp, act, slope);
                    for (c = 0; c < g->cout; ++c) {
                        acc[c] = (dy == 0 && dx == 0) || pixel[c] > acc[c] ? pixel[c] : acc[c];
                    }
                }
            }
            if (yq != NULL) {
                al_quantize_q8(acc, yq + at / 2, g->cout, g->cout, out_inv_scale);
            } else {
                for (c = 0; c < g->cout; ++c) {
                    y[at + c] = acc[c];
                }
            }
        }
    }
}
