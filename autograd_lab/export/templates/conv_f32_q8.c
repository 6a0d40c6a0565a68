/* A float32 conv whose reader takes int8: al_conv_f32 one output row at a time into row (pw * cout floats), each
   row then quantized with out_inv_scale (round half away from zero) into pair words of yq (cout even). Used for a
   first layer that reads the float input through a small patch, where int8 would spend more instructions
   quantizing every patch than it saves. */
AL_LAYER
static void al_conv_f32_q8(const float *x, const float *w, const float *b, uint32_t *yq, float out_inv_scale,
                           float *row, float *patch, float *sums, const al_conv_geom *g, int act, float slope)
{
    const int n = g->pw * g->cout;
    int oy;
    for (oy = 0; oy < g->ph; ++oy) {
        al_conv_f32(x, w, b, row, patch, sums, g, act, slope, oy, oy + 1);
        al_quantize_q8(row, yq + oy * n / 2, n, n, out_inv_scale);
    }
}
