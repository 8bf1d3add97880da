#include "voice.h"

#include <math.h>
#include <string.h>

/* The changer's own defaults: what a port left unconnected, or sent NaN, stands for. */
static const koe_voice_values defaults = {
    .pitch = 1.0, .formant = 1.0, .gain_db = 0.0, .pitch_range = 1.0, .whisper = 0.0,
    .snap = 0.0, .snap_key = 0.0, .snap_strength = 1.0, .snap_speed = 0.0,
    .vibrato_rate = 0.0, .vibrato_depth = KOE_VIBRATO_DEPTH_DEFAULT,
};

int koe_voice_open(koe_voice *voice, double sample_rate) {
    int status = KOE_ERROR_ARGUMENT;
    voice->changer = koe_create((int)lround(sample_rate), 1, &status);
    voice->given = defaults;
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

/* An integer port's value: hosts may send any float, so it is rounded after clamping. */
static double whole(const float *port, double min, double max, double fallback) {
    return round(clamped(port, min, max, fallback));
}

/* The ports' values now, each within its range. */
static koe_voice_values read_ports(const koe_voice_ports *ports) {
    return (koe_voice_values){
        .pitch = clamped(ports->pitch, KOE_RATIO_MIN, KOE_RATIO_MAX, defaults.pitch),
        .formant = clamped(ports->formant, KOE_RATIO_MIN, KOE_RATIO_MAX, defaults.formant),
        .gain_db = clamped(ports->gain_db, KOE_GAIN_DB_MIN, KOE_GAIN_DB_MAX, defaults.gain_db),
        .pitch_range = clamped(ports->pitch_range, 0.0, KOE_RANGE_MAX, defaults.pitch_range),
        .whisper = whole(ports->whisper, 0.0, 1.0, defaults.whisper),
        .snap = whole(ports->snap, 0.0, KOE_SNAP_PORT_MAX, defaults.snap),
        .snap_key = whole(ports->snap_key, 0.0, 11.0, defaults.snap_key),
        .snap_strength = clamped(ports->snap_strength, 0.0, 1.0, defaults.snap_strength),
        .snap_speed = clamped(ports->snap_speed, 0.0, KOE_SNAP_SPEED_MAX, defaults.snap_speed),
        .vibrato_rate = clamped(ports->vibrato_rate, 0.0, KOE_VIBRATO_RATE_MAX, defaults.vibrato_rate),
        .vibrato_depth = clamped(ports->vibrato_depth, 0.0, KOE_VIBRATO_DEPTH_MAX, defaults.vibrato_depth),
    };
}

/* Hands the changer the values that moved since the last run(). */
static void give(koe_voice *voice, const koe_voice_values *now) {
    koe_voice_values *given = &voice->given;
    koe_changer *changer = voice->changer;
    if (now->pitch != given->pitch) koe_set_pitch(changer, now->pitch);
    if (now->formant != given->formant) koe_set_formant(changer, now->formant);
    if (now->gain_db != given->gain_db) koe_set_gain_db(changer, now->gain_db);
    if (now->pitch_range != given->pitch_range) koe_set_pitch_range(changer, now->pitch_range);
    if (now->whisper != given->whisper) koe_set_whisper(changer, now->whisper != 0.0);
    if (now->snap != given->snap || now->snap_key != given->snap_key || now->snap_strength != given->snap_strength
        || now->snap_speed != given->snap_speed) {
        koe_set_snap_scale(changer, (int)now->snap_key, (int)now->snap - 1, now->snap_strength, now->snap_speed, 440.0);
    }
    if (now->vibrato_rate != given->vibrato_rate || now->vibrato_depth != given->vibrato_depth) {
        koe_set_vibrato(changer, now->vibrato_rate, now->vibrato_depth);
    }
    *given = *now;
}

void koe_voice_run(koe_voice *voice, const float *in, float *out, uint32_t frames, const koe_voice_ports *ports) {
    koe_voice_values now = read_ports(ports);
    give(voice, &now);

    /* The changer refuses non-finite samples; a host's NaN becomes silence, in the output buffer,
     * which the changer then processes in place. */
    for (uint32_t i = 0; i < frames; ++i) out[i] = isfinite(in[i]) ? in[i] : 0.0f;
    float *channels[1] = { out };
    if (koe_process(voice->changer, (const float *const *)channels, channels, (int)frames) != KOE_OK) {
        memset(out, 0, frames * sizeof *out);
    }
}
