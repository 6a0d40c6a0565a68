/* Max (avg 0) or average (avg 1) pooling; x in any layout (see al_conv_geom), y channels last. A kh x kw window
   whose taps are (dy, dx) apart moves by (sy, sx) from (-py, -px): taps in the padding or past the input (ceil
   mode) are left out. The maximum starts from the window's first tap on the input; the average is the sum of its
   taps on the input, in row-major window order from 0, divided by the number of taps inside the padded input
   (pad_in 1, PyTorch's count_include_pad) or inside the input (pad_in 0). Every window has a tap on the input
   (checked by the lowering). */
static void al_pool_f32(const float *x, float *y, const al_conv_geom *g, int avg)
{
    int oy, ox, c, i, j;
    for (oy = 0; oy < g->oh; ++oy) {
        const int y0 = oy * g->sy - g->py;
        int ys = y0, ye = y0 + g->kh < g->h + g->py ? y0 + g->kh : g->h + g->py;
        if (!g->pad_in) {
            ys = ys > 0 ? ys : 0;
            ye = ye < g->h ? ye : g->h;
        }
        for (ox = 0; ox < g->ow; ++ox) {
            const int x0 = ox * g->sx - g->px;
            int xs = x0, xe = x0 + g->kw < g->w + g->px ? x0 + g->kw : g->w + g->px;
            float count;
            if (!g->pad_in) {
                xs = xs > 0 ? xs : 0;
                xe = xe < g->w ? xe : g->w;
            }
            count = (float)((ye - ys) * (xe - xs));
            for (c = 0; c < g->cin; ++c) {
                const float *s = x + c * g->sc;
                float acc = 0.0f;
                int have = 0;
                for (i = 0; i < g->kh; ++i) {
                    const int iy = y0 + i * g->dy;
                    if (iy < 0 || iy >= g->h) {
                        continue;
                    }
                    for (j = 0; j < g->kw; ++j) {
                        const int ix = x0 + j * g->dx;
                        float v;
                        if (ix < 0 || ix >= g->w) {
                            continue;
                        }
                        v = s[iy * g->sh + ix * g->sw];
                        if (avg) {
                            acc = acc + v;
                        } else {
                            acc = !have || v > acc ? v : acc;
                            have = 1;
                        }
                    }
                }
                *y++ = avg ? acc / count : acc;
            }
        }
    }
}
