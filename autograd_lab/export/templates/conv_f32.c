/* 2-D convolution (cross-correlation, as the frameworks compute it) with its epilogue: per conv pixel, gather the
   patch and run al_dense_f32 on it (weights w: cout rows of kh*kw*cin values in patch order, in the dense kernel's
   blocked layout; b may be NULL), then, with a fused max pool, keep the largest value of each pool window.
   y is channels last. patch holds kh*kw*cin floats, pixel cout floats (used with pooling only). */
static void al_conv_f32(const float *x, const float *w, const float *b, float *y, float *patch, float *pixel,
                        const al_conv_geom *g, int act, float slope)
{
    const int k = g->kh * g->kw * g->cin;
    int oy, ox, dy, dx, c;
    if (g->pkh == 0) {
        for (oy = 0; oy < g->oh; ++oy) {
            for (ox = 0; ox < g->ow; ++ox) {
                al_patch_f32(x, patch, g, oy, ox);
                al_dense_f32(patch, w, b, y + (oy * g->ow + ox) * g->cout, k, g->cout, act, slope);
            }
        }
        return;
    }
    for (oy = 0; oy < g->ph; ++oy) {
        for (ox = 0; ox < g->pw; ++ox) {
            float *out = y + (oy * g->pw + ox) * g->cout;
            for (dy = 0; dy < g->pkh; ++dy) {
                for (dx = 0; dx < g->pkw; ++dx) {
                    const int first = dy == 0 && dx == 0;
                    al_patch_f32(x, patch, g, oy * g->psy + dy, ox * g->psx + dx);
                    al_dense_f32(patch, w, b, first ? out : pixel, k, g->cout, act, slope);
                    if (!first) {
                        for (c = 0; c < g->cout; ++c) {
                            out[c] = pixel[c] > out[c] ? pixel[c] : out[c];
                        }
                    }
                }
            }
        }
    }
}
