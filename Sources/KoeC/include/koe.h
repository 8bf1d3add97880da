/* koe.h — koe's voice changer for C callers (the LV2 and LADSPA plugins use exactly this).
 *
 * One changer serves one stream of `channels` planar float channels at one sample rate. Every block of N
 * frames in gives N frames out, delayed by koe_latency() frames. It runs on the calling thread alone, with
 * koe's live analysis and synthesis (VoiceChanger.Options.live): about 47 ms of latency at any rate.
 *
 * Thread-safety: a changer is used from one thread at a time; the setters take effect from the next
 * koe_process() and may be called between any two of them.
 * Real-time safety: koe_process() and the setters but koe_set_preset() add no allocation, lock or wait of their
 * own to VoiceChanger's (one thread, pointer form), which neither allocates nor takes a lock, from the first
 * block on, whatever the signal and the block size; a call that completes an analysis block does that block's
 * work. Tests/Plugins counts the heap and lock calls made under a host's run(). koe_create(), koe_set_preset(),
 * koe_reset() and koe_destroy() allocate or free and belong outside an audio callback.
 * No function throws, exits or traps on bad arguments: each returns a status (or NULL with *status set).
 */
#ifndef KOE_H
#define KOE_H

#ifdef __cplusplus
extern "C" {
#endif

typedef struct koe_changer koe_changer;

enum {
    KOE_OK = 0,
    KOE_ERROR_ARGUMENT = -1,  /* NULL changer or buffer, sample rate outside 8000-192000, channels < 1, frames < 0 */
    KOE_ERROR_PRESET = -2,    /* no preset of that name (see `koe presets`) */
    KOE_ERROR_PROCESS = -3    /* the changer refused the block (e.g. non-finite samples); the output is unspecified */
};

/* A new changer, or NULL with *status (when status is not NULL) saying why. Allocates. */
koe_changer *koe_create(int sample_rate, int channels, int *status);

/* Frees the changer; NULL is ignored. */
void koe_destroy(koe_changer *changer);

/* The F0 ratio (2 is an octave up), clamped to 1/16...16; a non-finite value is ignored. */
int koe_set_pitch(koe_changer *changer, double ratio);

/* The spectral envelope's frequency-axis ratio (> 1 moves formants up), clamped to 1/16...16; non-finite ignored. */
int koe_set_formant(koe_changer *changer, double ratio);

/* Output gain in dB, clamped to -60...60; non-finite ignored. */
int koe_set_gain_db(koe_changer *changer, double decibels);

/* Sets pitch, formant, EQ and the rest from a named voice (kawaii, deep, ...). Allocates. */
int koe_set_preset(koe_changer *changer, const char *name);

/* How many frames the output lags the input; fixed for the changer's life. -1 for a NULL changer. */
int koe_latency(const koe_changer *changer);

/* Processes `frames` frames (any number, 0 and 1 included) of each channel: input[c][0..frames) in,
 * output[c][0..frames) out. output may be the same buffers as input (in place). No lock; see real-time safety. */
int koe_process(koe_changer *changer, const float *const *input, float *const *output, int frames);

/* Forgets the stream (held samples become silence); same settings, same latency. Allocates. */
int koe_reset(koe_changer *changer);

/* A one-line English description of a status, for messages. Never NULL. */
const char *koe_status_string(int status);

#ifdef __cplusplus
}
#endif

#endif
