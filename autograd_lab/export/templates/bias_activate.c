/* y[i] = act(y[i] + b[i]) for n values; b may be NULL (no bias). */
static void al_bias_activate(float *y, const float *b, int n, int act, float slope)
{
    int i;
    for (i = 0; i < n; ++i) {
        y[i] = al_activate(b != NULL ? y[i] + b[i] : y[i], act, slope);
    }
}
