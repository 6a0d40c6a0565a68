/* Gather the patch of conv pixel (oy, ox) from channels-last int8 activations (int16 pairs, cin even) as kp / 2
   pair words: per window row one contiguous run of count * cin / 2 words, zero words for padding and for the tail
   up to kp. */
static void al_patch_q16(const uint32_t *x, uint32_t *p, const al_conv_geom *g, int oy, int ox, int kp)
{
    const int half = g->cin / 2;
    const int iy = oy * g->sy - g->py, ix = ox * g->sx - g->px;
    uint32_t *end = p + kp / 2;
    int i, j, lead = 0, count = 0;
    if (iy >= 0 && iy + g->kh <= g->h && ix >= 0 && ix + g->kw <= g->w) {
        /* the whole window inside the image: kh runs of kw * cin / 2 words, no bounds to check */
        const int run = g->kw * half;
        const uint32_t *row = x + (iy * g->sh + ix * g->sw) / 2;
        for (i = 0; i < g->kh; ++i, row += g->sh / 2) {
            for (j = 0; j < run; ++j) {
                *p++ = row[j];
            }
        }
        while (p != end) {
            *p++ = 0u;
        }
        return;
    }
    for (i = 0; i < g->kh; ++i) {
        const int at = al_window_row(g, oy, ox, i, &lead, &count);
        uint32_t *row_end = p + g->kw * half;
        if (at >= 0) {
            const uint32_t *s = x + at / 2;
            const uint32_t *stop = s + count * half;
            for (j = 0; j < lead * half; ++j) {
                *p++ = 0u;
            }
            while (s != stop) {
                *p++ = *s++;
            }
        }
        while (p != row_end) {
            *p++ = 0u;
        }
    }
    while (p != end) {
        *p++ = 0u;
    }
}

/* The int32 sums of the mp (a multiple of 4) rows of the int8 weights w with the pair words xq (kp inputs, a
   multiple of 8), the loop of al_dense_q8 without its epilogue: stored in sums, or, with keep_max, each sum kept
   only where it exceeds the one already there (the running maximum of a pooling window). 16 inputs per step, then
   8 when kp is an odd multiple of 8: padding a 3x3x8 patch (72) to 80 would cost 11% more MACs. */
AL_NO_PRESCHEDULE static void al_dot_q8(const uint32_t *xq, const uint64_t *w, int32_t *sums, int kp, int mp,
                                        int keep_max)
{
    int j;
    for (j = 0; j < mp; j += 4) {
        int32_t a0 = 0, a1 = 0, a2 = 0, a3 = 0;
        const uint32_t *xp = xq;
        const uint32_t *end = xq + kp / 16 * 8;
        while (xp != end) {
            AL_GROUP(0);
            AL_GROUP(1);
            AL_GROUP(2);
            AL_GROUP(3);
            xp += 8;
            w += 8;
        }
        if (kp % 16 != 0) {
            AL_GROUP(0);
            AL_GROUP(1);
            w += 4;
        }
        if (keep_max) {
            a0 = a0 > sums[j] ? a0 : sums[j];
            a1 = a1 > sums[j + 1] ? a1 : sums[j + 1];
            a2 = a2 > sums[j + 2] ? a2 : sums[j + 2];
            a3 = a3 > sums[j + 3] ? a3 : sums[j + 3];
        }
        sums[j] = a0;
        sums[j + 1] = a1;
        sums[j + 2] = a2;
        sums[j + 3] = a3;
    }
}

/* int8 conv: per conv pixel, the patch as int8 pairs (gathered from int8 activations xq, or from floats xf and
   quantized with in_inv_scale, round half away from zero) and its int32 sums with the weights (al_dot_q8); with a
   fused max pool, the largest sum of each pool window; then, once per output, the float32 requantisation
   v = (float)sum * scale[c] + b[c] and the activation, written as floats to y or, when yq is not NULL, quantized
   with out_inv_scale into pair words (cout even). The maximum may be taken on the sums because scale[c] > 0 and
   every later step is monotonic, so it gives the same bits as pooling the finished values.
   With g->groups = G > 1, group q reads input channels [q * cin / G, (q + 1) * cin / G) (from floats xf only) and
   owns the mp rows of w, scale and b from row q * mp: output channel c is row (c / (cout / G)) * mp + c % (cout / G).
   kp and mp are per group. fpatch (kh*kw*cin/G floats) is used only with float input; best holds G * mp sums. */
AL_LAYER
static void al_conv_q8(const float *xf, const uint32_t *xq, float in_inv_scale, const uint64_t *w, const float *scale,
                       const float *b, float *y, uint32_t *yq, float out_inv_scale, float *fpatch, uint32_t *qpatch,
                       int32_t *best, const al_conv_geom *g, int kp, int mp, int act, float slope)
{
    const int groups = g->groups > 1 ? g->groups : 1;
    const int pool = g->pkh > 0;
    const int wh = pool ? g->pkh : 1, ww = pool ? g->pkw : 1;
    const int sy = pool ? g->psy : 1, sx = pool ? g->psx : 1;
    al_conv_geom part = *g;
    int k, oy, ox, dy, dx, c, q;
    int32_t low = 0;
    part.cin = g->cin / groups;
    part.cout = g->cout / groups;
    k = g->kh * g->kw * part.cin;
    for (oy = 0; oy < g->ph; ++oy) {
        for (ox = 0; ox < g->pw; ++ox) {
            const int at = (oy * g->pw + ox) * g->cout;
            for (q = 0; q < groups; ++q) {
                for (dy = 0; dy < wh; ++dy) {
                    for (dx = 0; dx < ww; ++dx) {
                        const int first = dy == 0 && dx == 0;
                        if (xq != NULL) {
                            al_patch_q16(xq, qpatch, g, oy * sy + dy, ox * sx + dx, kp);
                        } else {
                            al_patch_f32(xf + q * part.cin * g->sc, fpatch, &part, oy * sy + dy, ox * sx + dx);
                            al_quantize_q8(fpatch, qpatch, k, kp, in_inv_scale);
                        }
                        al_dot_q8(qpatch, w + q * (mp * kp / 8), best + q * mp, kp, mp, !first);
                    }
                }
            }
            for (c = 0; c < g->cout; ++c) {
                const int r = (c / part.cout) * mp + c % part.cout;
                float v = (float)best[r] * scale[r];
                if (b != NULL) {
                    v = v + b[r];
                }
                v = al_activate(v, act, slope);
                if (yq == NULL) {
                    y[at + c] = v;
                } else if (c % 2 == 0) {
                    low = al_quantize_one(v, out_inv_scale);
                } else {
                    yq[(at + c) / 2] = al_pack_pair(low, al_quantize_one(v, out_inv_scale));
                }
            }
        }
    }
}
