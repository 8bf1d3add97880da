/* The mono voice both plugin wrappers share: control values as hosts send them, clamped to the ports'
 * ranges, and the audio through one koe changer. koe_voice_open and koe_voice_reset allocate (a host calls them
 * from instantiate and activate, outside its audio thread); koe_voice_run adds nothing of its own to what koe.h
 * says of koe_process(). */
#ifndef KOE_VOICE_H
#define KOE_VOICE_H

#include <stdint.h>

#include "koe.h"

/* The control ports' ranges and defaults, as the .ttl and the LADSPA descriptor declare them. */
#define KOE_RATIO_MIN 0.25
#define KOE_RATIO_MAX 4.0
#define KOE_GAIN_DB_MIN -24.0
#define KOE_GAIN_DB_MAX 24.0
#define KOE_RANGE_MAX 4.0
/* The snap port: 0 off, then 1 + each koe_scale (1 chromatic, 2 major, ... 14 whole-tone). */
#define KOE_SNAP_PORT_MAX 14.0
#define KOE_SNAP_SPEED_MAX 1000.0
#define KOE_VIBRATO_RATE_MAX 20.0
#define KOE_VIBRATO_DEPTH_MAX 200.0
#define KOE_VIBRATO_DEPTH_DEFAULT 50.0

/* Where a host put each control's value; NULL for a port not connected (its default is used). */
typedef struct {
    const float *pitch, *formant, *gain_db, *pitch_range, *whisper;
    const float *snap, *snap_key, *snap_strength, *snap_speed;
    const float *vibrato_rate, *vibrato_depth;
} koe_voice_ports;

/* The values the changer was last given, after clamping. */
typedef struct {
    double pitch, formant, gain_db, pitch_range, whisper;
    double snap, snap_key, snap_strength, snap_speed;
    double vibrato_rate, vibrato_depth;
} koe_voice_values;

typedef struct {
    koe_changer *changer;
    koe_voice_values given;
} koe_voice;

/* Makes the changer for this sample rate; 0 on success, else a koe status. */
int koe_voice_open(koe_voice *voice, double sample_rate);
void koe_voice_close(koe_voice *voice);

/* Output lag in frames, as the latency port reports it. */
float koe_voice_latency(const koe_voice *voice);

/* Forgets the stream (activate). */
void koe_voice_reset(koe_voice *voice);

/* One run() of `frames` frames with the controls `ports` points at; `in` may equal `out`. Non-finite input samples
 * are taken as silence; if the changer refuses a block, the output is silence. */
void koe_voice_run(koe_voice *voice, const float *in, float *out, uint32_t frames, const koe_voice_ports *ports);

#endif
