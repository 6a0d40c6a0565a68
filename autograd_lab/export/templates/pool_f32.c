/* Max (avg 0) or average (avg 1) pooling of a kh x kw window moving by (sy, sx), no padding; x in any layout (see
   al_conv_geom), y channels last. The average is the window's sum, in row-major window order, times 1 / (kh * kw). */
static void al_pool_f32(const float *x, float *y, const al_conv_geom *g, int avg)
{
    const float inv = 1.0f / (float)(g->kh * g->kw);
    int oy, ox, c, i, j;
    for (oy = 0; oy < g->oh; ++oy) {
        for (ox = 0; ox < g->ow; ++ox) {
            for (c = 0; c < g->cin; ++c) {
                const float *s = x + c * g->sc + oy * g->sy * g->sh + ox * g->sx * g->sw;
                float acc = s[0];
                for (i = 0; i < g->kh; ++i) {
                    for (j = 0; j < g->kw; ++j) {
                        const float v = s[i * g->sh + j * g->sw];
                        if (i == 0 && j == 0) {
                            continue;
                        }
                        if (avg) {
                            acc = acc + v;
                        } else {
                            acc = v > acc ? v : acc;
                        }
                    }
                }
                *y++ = avg ? acc * inv : acc;
            }
        }
    }
}
