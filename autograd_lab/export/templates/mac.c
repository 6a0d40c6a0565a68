/* Multiply-accumulate acc += x * w, rounded after the multiply and after the add (never fused).
   On a Cortex-M with a single-precision FPU, VMLA does exactly that in one instruction (it is the chained, not the
   fused, multiply-accumulate: ARMv7-M ARM, section A7.7.238), so the bits equal those of the portable line below.
   GCC's Cortex-M cost model never selects VMLA by itself, so it is requested here. */
#if defined(__ARM_FP) && (__ARM_FP & 4) && defined(__ARM_ARCH_PROFILE) && (__ARM_ARCH_PROFILE == 'M')
#define AL_MAC(acc, x, w) __asm__("vmla.f32 %0, %1, %2" : "+t"(acc) : "t"(x), "t"(w))
#else
#define AL_MAC(acc, x, w) ((acc) += (x) * (w))
#endif
