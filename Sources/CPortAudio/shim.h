#include <portaudio.h>

/* PortAudio's format and flag macros are casts, which Swift does not import: the values koe live uses. */
static const PaSampleFormat koe_paFloat32 = paFloat32;
static const PaStreamFlags koe_paNoFlag = paNoFlag;
static const PaDeviceIndex koe_paNoDevice = paNoDevice;
static const PaStreamCallbackFlags koe_paXrunFlags =
    paInputUnderflow | paInputOverflow | paOutputUnderflow | paOutputOverflow;
