/* Geometry of a conv or pooling layer. Input element (c, y, x) is x[c * sc + y * sh + x * sw] (any layout); the
   output is channels last (HWC). A kh x kw window moves by (sy, sx) over the input padded with (py, px) zeros and
   gives oh x ow pixels of cout channels; with pkh > 0 a max pool of pkh x pkw, stride (psy, psx), follows, fused,
   and gives ph x pw pixels (without it, ph = oh and pw = ow). direct = 1 marks the layer al_conv3x3_pool2_f32
   computes (3x3, stride 1, one input channel, 2x2 pool of stride 2), whose weights are plain rows. groups > 1
   splits the channels of a conv into groups (see al_conv_f32; 0 or 1: one group). A pooling step's taps are
   (dy, dx) apart; pad_in 1 counts the padding in an average's divisor (see al_pool_f32). */
typedef struct {
    int cin, h, w, sc, sh, sw, kh, kw, sy, sx, py, px, oh, ow, cout, pkh, pkw, psy, psx, ph, pw, direct, groups, dy, dx,
        pad_in;
} al_conv_geom;

