/* Reorder a channels-last (HWC) tensor of c channels and h x w pixels into the NCHW order of the graph. */
static void al_to_chw_f32(const float *x, float *y, int c, int h, int w)
{
    int i, p;
    for (i = 0; i < c; ++i) {
        for (p = 0; p < h * w; ++p) {
            *y++ = x[p * c + i];
        }
    }
}
