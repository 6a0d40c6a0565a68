/* The input pixel (iy, ix) a window position reads, or -1 when it falls on the zero padding. */
static int al_pixel_offset(const al_conv_geom *g, int oy, int ox, int i, int j)
{
    const int iy = oy * g->sy - g->py + i;
    const int ix = ox * g->sx - g->px + j;
    if (iy < 0 || iy >= g->h || ix < 0 || ix >= g->w) {
        return -1;
    }
    return iy * g->sh + ix * g->sw;
}

/* Gather the receptive field of conv pixel (oy, ox) into p, in the order (kh, kw, c_in), zeros for padding. */
static void al_patch_f32(const float *x, float *p, const al_conv_geom *g, int oy, int ox)
{
    int i, j, c;
    for (i = 0; i < g->kh; ++i) {
        for (j = 0; j < g->kw; ++j) {
            const int at = al_pixel_offset(g, oy, ox, i, j);
            if (at < 0) {
                for (c = 0; c < g->cin; ++c) {
                    *p++ = 0.0f;
                }
            } else {
                const float *s = x + at;
                for (c = 0; c < g->cin; ++c) {
                    *p++ = s[c * g->sc];
                }
            }
        }
    }
}
