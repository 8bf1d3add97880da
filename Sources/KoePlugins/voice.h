/* The mono voice both plugin wrappers share, all of a plugin instance but its host's API: the ports a host
 * connects, control values as hosts send them, clamped to the ports' ranges, and the audio through one koe changer.
 * koe_voice_create and koe_voice_reset allocate (a host calls them from instantiate and activate, outside its audio
 * thread); koe_voice_run adds nothing of its own to what koe.h says of koe_process(). */
#ifndef KOE_VOICE_H
#define KOE_VOICE_H

#include <stdint.h>

#include "koe.h"

/* The control ports' ranges, which a LADSPA descriptor's constant initializer needs too: the settings table's
 * (`koe settings`; Tests/Plugins compares koe.ttl's and the LADSPA descriptor's ports with it). */
#define KOE_RATIO_MIN 0.0625
#define KOE_RATIO_MAX 16.0
#define KOE_GAIN_DB_MIN -60.0
#define KOE_GAIN_DB_MAX 60.0
#define KOE_RANGE_MAX 10.0
#define KOE_SNAP_PORT_MAX 14.0
#define KOE_SNAP_SPEED_MAX 10000.0
#define KOE_VIBRATO_RATE_MAX 20.0
#define KOE_VIBRATO_DEPTH_MAX 1200.0
#define KOE_VIBRATO_DEPTH_DEFAULT 50.0
/* 0 off, then 1 + a koe_aim: the voice presets in `koe presets`' order. */
#define KOE_AIM_PORT_MAX 6.0

/* What a plugin's port carries, whatever its index: one of the voice controls, or the audio or the latency. */
typedef enum {
    KOE_CONTROL_PITCH, KOE_CONTROL_FORMANT, KOE_CONTROL_GAIN_DB, KOE_CONTROL_PITCH_RANGE, KOE_CONTROL_WHISPER,
    /* 0 off, then 1 + a koe_scale: 1 chromatic, 2 major, ... 14 whole-tone. */
    KOE_CONTROL_SNAP,
    KOE_CONTROL_SNAP_KEY, KOE_CONTROL_SNAP_STRENGTH, KOE_CONTROL_SNAP_SPEED, KOE_CONTROL_VIBRATO_RATE,
    KOE_CONTROL_VIBRATO_DEPTH,
    /* 0 off, then 1 + a koe_aim: 1 kawaii, 2 child, 3 female, 4 male, 5 deep, 6 giant. */
    KOE_CONTROL_AIM, KOE_CONTROL_COUNT,
    /* The ports that are not voice controls: mono audio in and out, and the latency reported to the host. */
    KOE_AUDIO_IN = -3, KOE_AUDIO_OUT = -2, KOE_LATENCY_OUT = -1
} koe_control;

/* The ports both plugins have after their first six (the audio ports, pitch, formant, gain and latency, in an order
 * each wrapper's port enum gives): the end of that enum. */
#define KOE_LATER_PORTS                                                                                             \
    PORT_PITCH_RANGE, PORT_WHISPER, PORT_SNAP, PORT_SNAP_KEY, PORT_SNAP_STRENGTH, PORT_SNAP_SPEED, PORT_VIBRATO_RATE, \
    PORT_VIBRATO_DEPTH, PORT_AIM, PORT_COUNT

/* A wrapper's table of what each port carries, for the ports its enum names PORT_ and the control's name. */
#define KOE_PORT_CONTROL_TABLE                                                                                      \
    static const koe_control port_controls[PORT_COUNT] = {                                                          \
        [PORT_INPUT] = KOE_AUDIO_IN, [PORT_OUTPUT] = KOE_AUDIO_OUT, [PORT_LATENCY] = KOE_LATENCY_OUT,               \
        KOE_PORT_CONTROLS,                                                                                          \
    }

#define KOE_PORT_CONTROLS                                                                                           \
    [PORT_PITCH] = KOE_CONTROL_PITCH, [PORT_FORMANT] = KOE_CONTROL_FORMANT,                                         \
    [PORT_GAIN_DB] = KOE_CONTROL_GAIN_DB, [PORT_PITCH_RANGE] = KOE_CONTROL_PITCH_RANGE,                             \
    [PORT_WHISPER] = KOE_CONTROL_WHISPER, [PORT_SNAP] = KOE_CONTROL_SNAP,                                           \
    [PORT_SNAP_KEY] = KOE_CONTROL_SNAP_KEY, [PORT_SNAP_STRENGTH] = KOE_CONTROL_SNAP_STRENGTH,                       \
    [PORT_SNAP_SPEED] = KOE_CONTROL_SNAP_SPEED, [PORT_VIBRATO_RATE] = KOE_CONTROL_VIBRATO_RATE,                     \
    [PORT_VIBRATO_DEPTH] = KOE_CONTROL_VIBRATO_DEPTH, [PORT_AIM] = KOE_CONTROL_AIM

/* A control's range and default, as the .ttl and the LADSPA descriptor declare them (Tests/Plugins reads both);
 * integer controls are rounded. */
typedef struct {
    double minimum, maximum, fallback;
    int integer;
} koe_control_range;

extern const koe_control_range koe_voice_ranges[KOE_CONTROL_COUNT];

typedef struct {
    koe_changer *changer;
    /* Where a host put each control's value; NULL for a port not connected (its default is used). */
    const float *ports[KOE_CONTROL_COUNT];
    /* The values the changer was last given, after clamping. */
    double given[KOE_CONTROL_COUNT];
    /* The audio buffers (`input` may equal `output`) and the latency port; NULL until connected. */
    const float *input;
    float *output;
    float *latency;
} koe_voice;

/* A voice with the changer for this sample rate and no port connected (instantiate); NULL if either cannot be
 * made. */
koe_voice *koe_voice_create(double sample_rate);
void koe_voice_destroy(koe_voice *voice);

/* Connects a port, named by what it carries, to the host's `data` (connect_port). */
void koe_voice_connect(koe_voice *voice, koe_control port, float *data);

/* Forgets the stream (activate). */
void koe_voice_reset(koe_voice *voice);

/* One run() of `frames` frames with the controls' values now: reports the latency in frames, then, if both audio
 * ports are connected, changes the input into the output. Non-finite input samples are taken as silence; if the
 * changer refuses a block, the output is silence. */
void koe_voice_run(koe_voice *voice, uint32_t frames);

#endif
