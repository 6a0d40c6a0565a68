/* exp(x) in float32 with + - * / only, so that every target (and the NumPy twin in simulate.py) computes the same
   bits: C libraries' expf differ in their last bit between the host and newlib. x = n ln2 + r with n = round(x / ln2)
   and r in [-ln2/2, ln2/2], ln2 split in two parts so that n * ln2_hi is exact (Cody & Waite, "Software Manual for
   the Elementary Functions", 1980, ch. 6); exp(r) by its Taylor polynomial of degree 7 (truncation error below
   6e-9 relative), then times 2^n made from its exponent bits. Error about 2 ulp. Below -87.3 (under FLT_MIN) it
   returns 0, above 88.72 infinity. */
static float al_exp_f32(float x)
{
    union { uint32_t u; float f; } scale;
    float n, r, p;
    int e;
    if (x < -87.3365479f) {
        return 0.0f;
    }
    if (x > 88.7228394f) {
        return HUGE_VALF;
    }
    e = (int)(x * 1.44269502f + (x < 0.0f ? -0.5f : 0.5f)); /* the cast truncates: round half away from zero */
    n = (float)e;
    r = (x - n * 0.693359375f) - n * -0.000212194442f;
    p = 1.0f + r * (1.0f + r * (0.5f + r * (0.166666672f + r * (0.0416666679f + r * (0.00833333377f
        + r * (0.00138888892f + r * 0.000198412701f))))));
    if (e > 127) { /* 2^128 has no float32: multiply by 2 first */
        p = p * 2.0f;
        e = e - 1;
    }
    scale.u = (uint32_t)(e + 127) << 23;
    return p * scale.f;
}
