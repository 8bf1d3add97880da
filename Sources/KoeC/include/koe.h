/* koe.h — koe's voice changer and `koe convert` for C callers (the LV2 and LADSPA plugins and the Python
 * extension use exactly this; koe_world.h has WORLD's whole-signal functions).
 *
 * One changer serves one stream of `channels` planar float channels at one sample rate. Every block of N
 * frames in gives N frames out, delayed by koe_latency() frames. A koe_create() changer runs on the calling
 * thread alone, with koe's live analysis and synthesis (VoiceChanger.Options.live): about 47 ms of latency at
 * any rate; koe_create_changer() chooses the analysis and the threads.
 *
 * Thread-safety: a changer is used from one thread at a time; the setters take effect from the next
 * koe_process() and may be called between any two of them.
 * Real-time safety: koe_process() and the setters but koe_set_preset() add no allocation, lock or wait of their
 * own to VoiceChanger's (one thread, pointer form), which neither allocates nor takes a lock, from the first
 * block on, whatever the signal and the block size; a call that completes an analysis block does that block's
 * work. Tests/Plugins counts the heap and lock calls made under a host's run(). koe_create(), koe_set_preset(),
 * koe_reset() and koe_destroy() allocate or free and belong outside an audio callback, as does every function
 * whose comment says "Allocates" (and koe_convert).
 * No function throws, exits or traps on bad arguments: each returns a status (or NULL with *status set).
 */
#ifndef KOE_H
#define KOE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct koe_changer koe_changer;

enum {
    KOE_OK = 0,
    KOE_ERROR_ARGUMENT = -1,  /* NULL changer or buffer, sample rate outside 8000-192000, channels < 1, frames < 0 */
    KOE_ERROR_PRESET = -2,    /* no preset of that name (see `koe presets`) */
    KOE_ERROR_PROCESS = -3,   /* the changer refused the block (e.g. non-finite samples); the output is unspecified */
    KOE_ERROR_IO = -4         /* a file could not be read or written (koe_convert) */
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

/* Sets pitch, formant, EQ and the rest from a named voice (kawaii, deep, ...). A voice preset (kawaii, child,
 * female, male, deep, giant) aims its pitch and formant ratios at its target, as koe_set_aim() says. Allocates. */
int koe_set_preset(koe_changer *changer, const char *name);

/* How many frames the output lags the input; fixed for the changer's life. -1 for a NULL changer. */
int koe_latency(const koe_changer *changer);

/* Processes `frames` frames (any number, 0 and 1 included) of each channel: input[c][0..frames) in,
 * output[c][0..frames) out. output may be the same buffers as input (in place). No lock; see real-time safety. */
int koe_process(koe_changer *changer, const float *const *input, float *const *output, int frames);

/* Forgets the stream (held samples become silence); same settings, same latency. Allocates. */
int koe_reset(koe_changer *changer);

/* A changer with a choice of analysis, or NULL with *status and the reason in message[0..message_size)
 * (NUL-terminated; either may be NULL): `live` nonzero for live analysis and synthesis (koe_create's), 0 for
 * WORLD's default analysis (about 215 ms of latency, the output of `koe convert`); `threads` 1 to 1024, 1 being
 * the calling thread alone. Allocates. */
koe_changer *koe_create_changer(int sample_rate, int channels, int live, int threads, int *status,
                                char *message, size_t message_size);

/* Pitch as a shift in semitones (the same setting as koe_set_pitch); non-finite ignored. */
int koe_set_semitones(koe_changer *changer, double semitones);

/* Scale of F0 excursions around the running median in log-F0: 0 monotone, 1 unchanged; clamped to 0...10. */
int koe_set_pitch_range(koe_changer *changer, double ratio);

/* The median F0 to move the voice to, in Hz, clamped to 10...5000; 0 keeps the voice's median (the default). */
int koe_set_pitch_median(koe_changer *changer, double hertz);

/* Nonzero: replace the excitation by noise. */
int koe_set_whisper(koe_changer *changer, int whisper);

/* Nonzero (the default): the output limiter keeps every sample within +-1. */
int koe_set_limit(koe_changer *changer, int limit);

/* Pitch correction: pull voiced F0 to the nearest note of `scale` ("chromatic" or KEY:SCALE such as "A:minor",
 * as --snap takes it), with strength 0...1, speed in ms (the time constant) and A4 in Hz, clamped as the changer
 * clamps them; a NULL scale turns it off. An unparsable scale is KOE_ERROR_ARGUMENT with the reason in message. */
int koe_set_snap(koe_changer *changer, const char *scale, double strength, double speed, double a4,
                 char *message, size_t message_size);

/* The scales koe_set_snap_scale() takes, in the order of --snap's names (chromatic, major, minor, dorian, ...). */
typedef enum koe_scale {
    KOE_SNAP_OFF = -1,
    KOE_SCALE_CHROMATIC, KOE_SCALE_MAJOR, KOE_SCALE_MINOR, KOE_SCALE_DORIAN, KOE_SCALE_PHRYGIAN, KOE_SCALE_LYDIAN,
    KOE_SCALE_MIXOLYDIAN, KOE_SCALE_LOCRIAN, KOE_SCALE_HARMONIC_MINOR, KOE_SCALE_MELODIC_MINOR,
    KOE_SCALE_MAJOR_PENTATONIC, KOE_SCALE_MINOR_PENTATONIC, KOE_SCALE_BLUES, KOE_SCALE_WHOLE_TONE
} koe_scale;

/* koe_set_snap() with the scale as numbers, for a host's control ports: `key` the tonic's pitch class (0 is C,
 * 9 is A; taken modulo 12) and `scale` a koe_scale, KOE_SNAP_OFF turning it off; strength, speed and a4 as there.
 * Allocates nothing. KOE_ERROR_ARGUMENT for a scale outside the list. */
int koe_set_snap_scale(koe_changer *changer, int key, int scale, double strength, double speed, double a4);

/* A sinusoidal vibrato on voiced frames: rate in Hz, depth in cents either way, clamped; rate 0 turns it off. */
int koe_set_vibrato(koe_changer *changer, double rate, double depth);

/* The EQ bands, in the CLI's --eq form ("peak:1000:6:1.4"), replacing the current ones; an unparsable spec is
 * KOE_ERROR_ARGUMENT with the reason in message, and nothing changes. Allocates. */
int koe_set_equalizer(koe_changer *changer, const char *const *specs, int count, char *message, size_t message_size);

/* The settings as the changer holds them (clamped). pitch_median is 0 when none is set. */
typedef struct koe_voice_settings {
    double pitch, formant, pitch_range, pitch_median, gain_db;
    int whisper, limit;
} koe_voice_settings;
int koe_get_voice(const koe_changer *changer, koe_voice_settings *voice);

/* Ends the stream: writes the koe_latency() frames still held into output[c][0..latency). Then only
 * koe_reset() starts a new stream. Allocates. */
int koe_finish(koe_changer *changer, float *const *output);

/* Converts the audio file `input` into `output` as `koe convert input output OPTIONS` does: options are the
 * CLI's long options by name without dashes and in snake_case, each with its value as text ("pitch" "1.2",
 * "eq" "peak:1000:6" (repeatable), "live" "1"; see docs/python.md for the list). The output
 * appears only complete. KOE_ERROR_ARGUMENT for bad options or input, KOE_ERROR_IO for a file that cannot be
 * read or written, with the reason in message. Runs on the calling thread unless "threads" asks for more. */
int koe_convert(const char *input, const char *output, const char *const *names, const char *const *values,
                int count, char *message, size_t message_size);

/* A voice's profile, as `koe profile --json` prints it. vocal_tract_length_cm is NaN when no formant was found. */
typedef struct koe_profile_result {
    double f0_median_hz;          /* median F0 of the voiced frames */
    double f0_spread_semitones;   /* semitones between the 10th and 90th percentiles of the voiced frames' F0 */
    double vocal_tract_length_cm; /* from the formant spacing */
    double voiced_seconds;        /* seconds of voiced frames the figures rest on */
} koe_profile_result;

/* Measures the voice in `frames` mono samples at `sample_rate` Hz into *result, as `koe profile` does.
 * KOE_ERROR_ARGUMENT, with the reason in message, for a NULL pointer, frames < 0, a sample rate outside
 * 8000-192000, a sample that is not finite, or no voiced frame (silence, noise, too short). Allocates; runs on the
 * calling thread. */
int koe_profile(const double *samples, long frames, int sample_rate, koe_profile_result *result, char *message,
                size_t message_size);

/* Presets as targets, live. A changer estimates the speaker's profile (koe_profile()'s measure) as the voice runs,
 * usable once 0.5 s of voiced speech has been heard (silence, whisper and breath leave it as it is). A voice that aims
 * at a preset's target holds the preset's typical ratios until then (or takes koe_set_profile()'s at once), then
 * moves its pitch and formant ratios to those that take this speaker to the target, at 12 semitones a second, and
 * follows the estimate. koe_set_pitch() or koe_set_formant() with another value than the preset's ends the aim of
 * that ratio. */

/* The voice presets koe_set_aim() takes, in `koe presets`' order. */
typedef enum koe_aim {
    KOE_AIM_OFF = -1, KOE_AIM_KAWAII, KOE_AIM_CHILD, KOE_AIM_FEMALE, KOE_AIM_MALE, KOE_AIM_DEEP, KOE_AIM_GIANT
} koe_aim;

/* Aims the pitch and formant ratios at a voice preset's target, and sets them to its typical ones meanwhile; only
 * the ratios, not the preset's EQ or other settings (koe_set_preset() sets those). KOE_AIM_OFF ends the aim: the
 * ratios are the ones set. Allocates nothing. KOE_ERROR_ARGUMENT for a value outside the list. */
int koe_set_aim(koe_changer *changer, int aim);

/* Starts from a known speaker: the profile koe_profile() or `koe profile --json` measured, which a voice aims from
 * until the changer's own estimate is usable; NULL forgets it. KOE_ERROR_ARGUMENT, nothing changed, for a median
 * outside 10...5000 Hz, a length that is neither NaN (unknown) nor positive, or a spread or voiced time that is
 * negative or not finite. Allocates nothing. */
int koe_set_profile(koe_changer *changer, const koe_profile_result *profile);

/* The profile a voice aims from now: the changer's estimate once usable, before that koe_set_profile()'s; when
 * there is none yet, every figure is NaN. */
int koe_get_profile(const koe_changer *changer, koe_profile_result *profile);

/* The pitch and formant ratios the vocoder gave its latest frame (the first channel's): while a voice aims, the
 * aimed ones, which koe_get_voice() does not show (it gives the ratios set). */
int koe_get_ratios(const koe_changer *changer, double *pitch, double *formant);

/* A one-line English description of a status, for messages. Never NULL. */
const char *koe_status_string(int status);

#ifdef __cplusplus
}
#endif

#endif
