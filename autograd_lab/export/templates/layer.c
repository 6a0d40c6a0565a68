/* Layer kernels are called once per layer: kept out of line (GCC, clang), so that profiles, instruction counts
   and -fstack-usage see each layer on its own; the cost is one call per layer. */
#if defined(__GNUC__)
#define AL_LAYER __attribute__((noinline))
#else
#define AL_LAYER
#endif
