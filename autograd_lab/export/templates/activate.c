/* Activation applied in a layer's epilogue: 0 none, 1 ReLU, 2 leaky ReLU with the given slope. */
static float al_activate(float v, int act, float slope)
{
    if (act == 1) {
        return v > 0.0f ? v : 0.0f;
    }
    if (act == 2) {
        return v > 0.0f ? v : v * slope;
    }
    return v;
}

