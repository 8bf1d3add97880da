#include "voice.h"

#include <math.h>
#include <string.h>

int koe_voice_open(koe_voice *voice, double sample_rate) {
    int status = KOE_ERROR_ARGUMENT;
    voice->changer = koe_create((int)lround(sample_rate), 1, &status);
    voice->pitch = 1.0;
    voice->formant = 1.0;
    voice->gain_db = 0.0;
    return voice->changer ? KOE_OK : status;
}

void koe_voice_close(koe_voice *voice) {
    koe_destroy(voice->changer);
    voice->changer = NULL;
}

float koe_voice_latency(const koe_voice *voice) {
    return (float)koe_latency(voice->changer);
}

void koe_voice_reset(koe_voice *voice) {
    koe_reset(voice->changer);
}

/* A control value the port's range allows: NaN (and a missing port) is the default, the rest clamped. */
static double clamped(const float *port, double min, double max, double fallback) {
    if (!port || isnan(*port)) return fallback;
    return fmin(fmax((double)*port, min), max);
}

void koe_voice_run(koe_voice *voice, const float *in, float *out, uint32_t frames,
                   const float *pitch, const float *formant, const float *gain_db) {
    double p = clamped(pitch, KOE_RATIO_MIN, KOE_RATIO_MAX, 1.0);
    double f = clamped(formant, KOE_RATIO_MIN, KOE_RATIO_MAX, 1.0);
    double g = clamped(gain_db, KOE_GAIN_DB_MIN, KOE_GAIN_DB_MAX, 0.0);
    if (p != voice->pitch) { koe_set_pitch(voice->changer, p); voice->pitch = p; }
    if (f != voice->formant) { koe_set_formant(voice->changer, f); voice->formant = f; }
    if (g != voice->gain_db) { koe_set_gain_db(voice->changer, g); voice->gain_db = g; }

    /* The changer refuses non-finite samples; a host's NaN becomes silence, in the output buffer,
     * which the changer then processes in place. */
    for (uint32_t i = 0; i < frames; ++i) out[i] = isfinite(in[i]) ? in[i] : 0.0f;
    float *channels[1] = { out };
    if (koe_process(voice->changer, (const float *const *)channels, channels, (int)frames) != KOE_OK) {
        memset(out, 0, frames * sizeof *out);
    }
}
