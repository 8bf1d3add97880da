#include <fftw3.h>

/* The wisdom of the FFTW koe links. `make FFTW=tuned` measures it for the building machine into
   koe_fftw_wisdom.h beside its FFTW's fftw3.h; any other FFTW (Debian's, by default) takes the wisdom committed
   in Sources/KoeDSP/FFTWisdom.swift, and gets NULL here. */
#if __has_include(<koe_fftw_wisdom.h>)
#include <koe_fftw_wisdom.h>
#else
static inline const char *koe_fftw_build_wisdom(void) { return 0; }
#endif
