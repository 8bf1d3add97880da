/* koe_world.h — WORLD's whole-signal analysis and synthesis for C callers (the Python extension uses exactly this).
 *
 * The functions are pyworld's, on flat buffers the caller allocates: size them first with the helpers
 * (koe_world_frame_count, koe_world_cheaptrick_fft_size, koe_world_synthesis_length, ...). Spectrograms and
 * aperiodicities are row-major, one row of fft_size / 2 + 1 bins per frame. Numbers follow WORLD (see KoeWorld).
 *
 * Threads: every call computes on the calling thread alone, unless its `threads` argument (1 to 1024) asks for
 * more; calls on different threads share nothing and may run at once.
 * Errors: each function returns KOE_OK or a negative status (koe.h) and, unless `message` is NULL, writes a
 * one-line English reason into message[0..message_size), NUL-terminated and truncated to fit. Nothing throws,
 * exits or traps on bad arguments: NULL buffers, negative lengths, NaN or infinite samples, an unsupported rate.
 */
#ifndef KOE_WORLD_H
#define KOE_WORLD_H

#include <stddef.h>
#include "koe.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Frames DIO and Harvest give for `samples` samples: one at time 0, then one every frame_period ms. */
int koe_world_frame_count(int fs, double frame_period, long samples, long *frames, char *message, size_t message_size);

/* DIO: f0[0..frames) (0 = unvoiced) and time[0..frames) in seconds; frames from koe_world_frame_count. */
int koe_world_dio(const double *x, long length, int fs, double f0_floor, double f0_ceil, double channels_in_octave,
                  double frame_period, int speed, double allowed_range, double *f0, double *time, long frames,
                  char *message, size_t message_size);

/* Harvest: as DIO. */
int koe_world_harvest(const double *x, long length, int fs, double f0_floor, double f0_ceil, double frame_period,
                      double *f0, double *time, long frames, char *message, size_t message_size);

/* StoneMask: refined[0..frames) from the F0 and times of each frame. */
int koe_world_stonemask(const double *x, long length, int fs, const double *time, const double *f0, long frames,
                        double *refined, char *message, size_t message_size);

/* WORLD's FFT size for CheapTrick at this F0 floor (pyworld's get_cheaptrick_fft_size). */
int koe_world_cheaptrick_fft_size(int fs, double f0_floor, int *fft_size, char *message, size_t message_size);

/* The lowest F0 an FFT of fft_size holds (pyworld's get_cheaptrick_f0_floor): 3 fs / (fft_size - 3). */
int koe_world_cheaptrick_f0_floor(int fs, int fft_size, double *f0_floor, char *message, size_t message_size);

/* CheapTrick: spectrogram[frames * (fft_size / 2 + 1)]. fft_size must be one CheapTrick accepts at fs. */
int koe_world_cheaptrick(const double *x, long length, int fs, const double *time, const double *f0, long frames,
                         double q1, int fft_size, int threads, double *spectrogram, char *message, size_t message_size);

/* D4C: aperiodicity[frames * (fft_size / 2 + 1)]. */
int koe_world_d4c(const double *x, long length, int fs, const double *time, const double *f0, long frames,
                  double threshold, int fft_size, int threads, double *aperiodicity, char *message, size_t message_size);

/* Samples koe_world_synthesize makes from `frames` frames: frames * frame_period * fs / 1000, truncated. */
int koe_world_synthesis_length(int fs, double frame_period, long frames, long *length, char *message, size_t message_size);

/* Synthesis: y[0..length) from f0[frames] and spectrogram and aperiodicity[frames * bins]; bins = fft_size / 2 + 1
 * and length from koe_world_synthesis_length. */
int koe_world_synthesize(const double *f0, long frames, const double *spectrogram, const double *aperiodicity,
                         long bins, int fs, double frame_period, double *y, long length,
                         char *message, size_t message_size);

/* WORLD's codecs (pyworld's code_ and decode_ functions). Envelopes and aperiodicities have fft_size / 2 + 1 bins
 * a frame; a coded envelope `dimensions` coefficients, a coded aperiodicity koe_world_aperiodicity_band_count's
 * values (none below 12 kHz: such aperiodicity codes to frames of no values and decodes as WORLD decodes it). */
int koe_world_aperiodicity_band_count(int fs, int *count, char *message, size_t message_size);

int koe_world_code_aperiodicity(const double *aperiodicity, long frames, int fs, int fft_size, double *coded,
                                char *message, size_t message_size);

int koe_world_decode_aperiodicity(const double *coded, long frames, int fs, int fft_size, double *aperiodicity,
                                  char *message, size_t message_size);

int koe_world_code_spectral_envelope(const double *spectrogram, long frames, int fs, int fft_size, int dimensions,
                                     double *coded, char *message, size_t message_size);

int koe_world_decode_spectral_envelope(const double *coded, long frames, int fs, int fft_size, int dimensions,
                                       double *spectrogram, char *message, size_t message_size);

#ifdef __cplusplus
}
#endif

#endif
