#include "voice.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

const koe_control_range koe_voice_ranges[KOE_CONTROL_COUNT] = {
    [KOE_CONTROL_PITCH] = { KOE_RATIO_MIN, KOE_RATIO_MAX, 1.0, 0 },
    [KOE_CONTROL_FORMANT] = { KOE_RATIO_MIN, KOE_RATIO_MAX, 1.0, 0 },
    [KOE_CONTROL_GAIN_DB] = { KOE_GAIN_DB_MIN, KOE_GAIN_DB_MAX, 0.0, 0 },
    [KOE_CONTROL_PITCH_RANGE] = { 0.0, KOE_RANGE_MAX, 1.0, 0 },
    [KOE_CONTROL_WHISPER] = { 0.0, 1.0, 0.0, 1 },
    [KOE_CONTROL_SNAP] = { 0.0, KOE_SNAP_PORT_MAX, 0.0, 1 },
    [KOE_CONTROL_SNAP_KEY] = { 0.0, 11.0, 0.0, 1 },
    [KOE_CONTROL_SNAP_STRENGTH] = { 0.0, 1.0, 1.0, 0 },
    [KOE_CONTROL_SNAP_SPEED] = { 0.0, KOE_SNAP_SPEED_MAX, 0.0, 0 },
    /* 0 turns the vibrato off. */
    [KOE_CONTROL_VIBRATO_RATE] = { 0.0, KOE_VIBRATO_RATE_MAX, 0.0, 0 },
    [KOE_CONTROL_VIBRATO_DEPTH] = { 0.0, KOE_VIBRATO_DEPTH_MAX, KOE_VIBRATO_DEPTH_DEFAULT, 0 },
    [KOE_CONTROL_AIM] = { 0.0, KOE_AIM_PORT_MAX, 0.0, 1 },
};

koe_voice *koe_voice_create(double sample_rate) {
    koe_voice *voice = calloc(1, sizeof *voice);
    if (!voice) return NULL;
    voice->changer = koe_create((int)lround(sample_rate), 1, NULL);
    if (!voice->changer) {
        free(voice);
        return NULL;
    }
    for (int control = 0; control < KOE_CONTROL_COUNT; ++control) {
        voice->given[control] = koe_voice_ranges[control].fallback;
    }
    return voice;
}

void koe_voice_destroy(koe_voice *voice) {
    koe_destroy(voice->changer);
    free(voice);
}

void koe_voice_connect(koe_voice *voice, koe_control port, float *data) {
    switch (port) {
    case KOE_AUDIO_IN: voice->input = data; break;
    case KOE_AUDIO_OUT: voice->output = data; break;
    case KOE_LATENCY_OUT: voice->latency = data; break;
    default:
        if (port >= 0 && port < KOE_CONTROL_COUNT) voice->ports[port] = data;
    }
}

void koe_voice_reset(koe_voice *voice) {
    koe_reset(voice->changer);
}

/* A control's value the port's range allows: NaN (and a missing port) is the default, the rest clamped, and an
 * integer control's rounded (hosts may send any float). */
static double control_value(const koe_voice *voice, koe_control control) {
    const koe_control_range *range = &koe_voice_ranges[control];
    const float *port = voice->ports[control];
    if (!port || isnan(*port)) return range->fallback;
    double value = fmin(fmax((double)*port, range->minimum), range->maximum);
    return range->integer ? round(value) : value;
}

/* Whether any of `controls` has moved from what the changer was given. */
static int moved(const double *now, const double *given, const koe_control *controls, int count) {
    for (int i = 0; i < count; ++i) {
        if (now[controls[i]] != given[controls[i]]) return 1;
    }
    return 0;
}

static const koe_control snap_controls[] = {
    KOE_CONTROL_SNAP, KOE_CONTROL_SNAP_KEY, KOE_CONTROL_SNAP_STRENGTH, KOE_CONTROL_SNAP_SPEED,
};
static const koe_control vibrato_controls[] = { KOE_CONTROL_VIBRATO_RATE, KOE_CONTROL_VIBRATO_DEPTH };

/* Hands the changer the values that moved since the last run(). */
static void give(koe_voice *voice) {
    double now[KOE_CONTROL_COUNT];
    for (int control = 0; control < KOE_CONTROL_COUNT; ++control) now[control] = control_value(voice, control);
    double *given = voice->given;
    koe_changer *changer = voice->changer;
    /* The aim first: turned on, it sets the ratios to its preset's until a ratio port moves; turned off, the ratio
     * ports' values hold again. */
    if (now[KOE_CONTROL_AIM] != given[KOE_CONTROL_AIM]) {
        koe_set_aim(changer, (int)now[KOE_CONTROL_AIM] - 1);
        if (now[KOE_CONTROL_AIM] == 0.0) given[KOE_CONTROL_PITCH] = given[KOE_CONTROL_FORMANT] = NAN;
    }
    if (now[KOE_CONTROL_PITCH] != given[KOE_CONTROL_PITCH]) koe_set_pitch(changer, now[KOE_CONTROL_PITCH]);
    if (now[KOE_CONTROL_FORMANT] != given[KOE_CONTROL_FORMANT]) koe_set_formant(changer, now[KOE_CONTROL_FORMANT]);
    if (now[KOE_CONTROL_GAIN_DB] != given[KOE_CONTROL_GAIN_DB]) koe_set_gain_db(changer, now[KOE_CONTROL_GAIN_DB]);
    if (now[KOE_CONTROL_PITCH_RANGE] != given[KOE_CONTROL_PITCH_RANGE]) {
        koe_set_pitch_range(changer, now[KOE_CONTROL_PITCH_RANGE]);
    }
    if (now[KOE_CONTROL_WHISPER] != given[KOE_CONTROL_WHISPER]) koe_set_whisper(changer, now[KOE_CONTROL_WHISPER] != 0.0);
    if (moved(now, given, snap_controls, 4)) {
        koe_set_snap_scale(changer, (int)now[KOE_CONTROL_SNAP_KEY], (int)now[KOE_CONTROL_SNAP] - 1,
                           now[KOE_CONTROL_SNAP_STRENGTH], now[KOE_CONTROL_SNAP_SPEED], 440.0);
    }
    if (moved(now, given, vibrato_controls, 2)) {
        koe_set_vibrato(changer, now[KOE_CONTROL_VIBRATO_RATE], now[KOE_CONTROL_VIBRATO_DEPTH]);
    }
    memcpy(voice->given, now, sizeof now);
}

void koe_voice_run(koe_voice *voice, uint32_t frames) {
    if (voice->latency) *voice->latency = (float)koe_latency(voice->changer);
    const float *in = voice->input;
    float *out = voice->output;
    if (!in || !out) return;
    give(voice);

    /* The changer refuses non-finite samples; a host's NaN becomes silence, in the output buffer,
     * which the changer then processes in place. */
    for (uint32_t i = 0; i < frames; ++i) out[i] = isfinite(in[i]) ? in[i] : 0.0f;
    float *channels[1] = { out };
    if (koe_process(voice->changer, (const float *const *)channels, channels, (int)frames) != KOE_OK) {
        memset(out, 0, frames * sizeof *out);
    }
}
