/* Input offset of the first pixel of window row i for conv pixel (oy, ox), and how many of the row's kw pixels
   lie left of the image (*lead) and inside it (*count); returns -1 when the whole row is in the zero padding. */
static int al_window_row(const al_conv_geom *g, int oy, int ox, int i, int *lead, int *count)
{
    const int iy = oy * g->sy - g->py + i;
    const int ix = ox * g->sx - g->px;
    int lo = ix < 0 ? -ix : 0;
    int hi = ix + g->kw > g->w ? g->w - ix : g->kw;
    if (iy < 0 || iy >= g->h || hi <= lo) {
        return -1;
    }
    *lead = lo;
    *count = hi - lo;
    return iy * g->sh + (ix + lo) * g->sw;
}

/* Gather the receptive field of conv pixel (oy, ox) into p, in the order (kh, kw, c_in), zeros for padding.
   When a pixel's channels are contiguous (HWC, or a single channel), the inside part of each window row is one
   contiguous run of count * cin floats, copied with one loop. */
static void al_patch_f32(const float *x, float *p, const al_conv_geom *g, int oy, int ox)
{
    const int runs = (g->cin == 1 && g->sw == 1) || (g->sc == 1 && g->sw == g->cin);
    const int iy = oy * g->sy - g->py, ix = ox * g->sx - g->px;
    int i, j, c, lead = 0, count = 0;
    if (runs && iy >= 0 && iy + g->kh <= g->h && ix >= 0 && ix + g->kw <= g->w) {
        /* the whole window inside the image: kh runs of kw * cin floats, no bounds to check */
        const int run = g->kw * g->cin;
        const float *row = x + iy * g->sh + ix * g->sw;
        for (i = 0; i < g->kh; ++i, row += g->sh) {
            for (j = 0; j < run; ++j) {
                *p++ = row[j];
            }
        }
        return;
    }
    for (i = 0; i < g->kh; ++i) {
        const int at = al_window_row(g, oy, ox, i, &lead, &count);
        float *end = p + g->kw * g->cin;
        if (at < 0) {
            while (p != end) {
                *p++ = 0.0f;
            }
            continue;
        }
        for (j = 0; j < lead * g->cin; ++j) {
            *p++ = 0.0f;
        }
        if (runs) {
            const float *s = x + at;
            const float *stop = s + count * g->cin;
            while (s != stop) {
                *p++ = *s++;
            }
        } else {
            for (j = 0; j < count; ++j) {
                const float *s = x + at + j * g->sw;
                for (c = 0; c < g->cin; ++c) {
                    *p++ = s[c * g->sc];
                }
            }
        }
        while (p != end) {
            *p++ = 0.0f;
        }
    }
}
