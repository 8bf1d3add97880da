/* koe as a LADSPA plugin, label koe_voice: control ports pitch, formant, gain_db, then the output port
 * `latency` (the name sox's `ladspa -l` looks for to compensate), then mono audio in and out, then the other
 * voice controls. Hosts such as sox take control values in port order: the first three stay where they were, and
 * every later one has a default. */
#include <ladspa.h>

#include "../voice.h"

enum { PORT_PITCH, PORT_FORMANT, PORT_GAIN_DB, PORT_LATENCY, PORT_INPUT, PORT_OUTPUT, KOE_LATER_PORTS };

KOE_PORT_CONTROL_TABLE;

static LADSPA_Handle instantiate(const LADSPA_Descriptor *descriptor, unsigned long rate) {
    (void)descriptor;
    return koe_voice_create((double)rate);
}

static void connect_port(LADSPA_Handle instance, unsigned long port, LADSPA_Data *data) {
    if (port < PORT_COUNT) koe_voice_connect(instance, port_controls[port], data);
}

static void activate(LADSPA_Handle instance) {
    koe_voice_reset(instance);
}

static void run(LADSPA_Handle instance, unsigned long frames) {
    koe_voice_run(instance, (uint32_t)frames);
}

static void cleanup(LADSPA_Handle instance) {
    koe_voice_destroy(instance);
}

static const LADSPA_PortDescriptor port_descriptors[PORT_COUNT] = {
    LADSPA_PORT_INPUT | LADSPA_PORT_CONTROL,
    LADSPA_PORT_INPUT | LADSPA_PORT_CONTROL,
    LADSPA_PORT_INPUT | LADSPA_PORT_CONTROL,
    LADSPA_PORT_OUTPUT | LADSPA_PORT_CONTROL,
    LADSPA_PORT_INPUT | LADSPA_PORT_AUDIO,
    LADSPA_PORT_OUTPUT | LADSPA_PORT_AUDIO,
    LADSPA_PORT_INPUT | LADSPA_PORT_CONTROL,
    LADSPA_PORT_INPUT | LADSPA_PORT_CONTROL,
    LADSPA_PORT_INPUT | LADSPA_PORT_CONTROL,
    LADSPA_PORT_INPUT | LADSPA_PORT_CONTROL,
    LADSPA_PORT_INPUT | LADSPA_PORT_CONTROL,
    LADSPA_PORT_INPUT | LADSPA_PORT_CONTROL,
    LADSPA_PORT_INPUT | LADSPA_PORT_CONTROL,
    LADSPA_PORT_INPUT | LADSPA_PORT_CONTROL,
    LADSPA_PORT_INPUT | LADSPA_PORT_CONTROL,
};

static const char *const port_names[PORT_COUNT] = {
    "pitch", "formant", "gain_db", "latency", "Input", "Output", "pitch_range", "whisper",
    "snap", "snap_key", "snap_strength", "snap_speed", "vibrato_rate", "vibrato_depth", "aim",
};

static const LADSPA_PortRangeHint port_hints[PORT_COUNT] = {
    { LADSPA_HINT_BOUNDED_BELOW | LADSPA_HINT_BOUNDED_ABOVE | LADSPA_HINT_LOGARITHMIC | LADSPA_HINT_DEFAULT_1,
      KOE_RATIO_MIN, KOE_RATIO_MAX },
    { LADSPA_HINT_BOUNDED_BELOW | LADSPA_HINT_BOUNDED_ABOVE | LADSPA_HINT_LOGARITHMIC | LADSPA_HINT_DEFAULT_1,
      KOE_RATIO_MIN, KOE_RATIO_MAX },
    { LADSPA_HINT_BOUNDED_BELOW | LADSPA_HINT_BOUNDED_ABOVE | LADSPA_HINT_DEFAULT_0, KOE_GAIN_DB_MIN, KOE_GAIN_DB_MAX },
    { 0, 0, 0 },
    { 0, 0, 0 },
    { 0, 0, 0 },
    { LADSPA_HINT_BOUNDED_BELOW | LADSPA_HINT_BOUNDED_ABOVE | LADSPA_HINT_DEFAULT_1, 0, KOE_RANGE_MAX },
    { LADSPA_HINT_TOGGLED | LADSPA_HINT_DEFAULT_0, 0, 0 },
    /* 0 off, then 1 + koe_scale: 1 chromatic, 2 major, 3 minor, ... 14 whole-tone. */
    { LADSPA_HINT_BOUNDED_BELOW | LADSPA_HINT_BOUNDED_ABOVE | LADSPA_HINT_INTEGER | LADSPA_HINT_DEFAULT_0,
      0, KOE_SNAP_PORT_MAX },
    /* The tonic: 0 C, 1 C#, ... 9 A, ... 11 B. */
    { LADSPA_HINT_BOUNDED_BELOW | LADSPA_HINT_BOUNDED_ABOVE | LADSPA_HINT_INTEGER | LADSPA_HINT_DEFAULT_0, 0, 11 },
    { LADSPA_HINT_BOUNDED_BELOW | LADSPA_HINT_BOUNDED_ABOVE | LADSPA_HINT_DEFAULT_1, 0, 1 },
    { LADSPA_HINT_BOUNDED_BELOW | LADSPA_HINT_BOUNDED_ABOVE | LADSPA_HINT_DEFAULT_0, 0, KOE_SNAP_SPEED_MAX },
    /* 0 turns the vibrato off. */
    { LADSPA_HINT_BOUNDED_BELOW | LADSPA_HINT_BOUNDED_ABOVE | LADSPA_HINT_DEFAULT_0, 0, KOE_VIBRATO_RATE_MAX },
    /* LADSPA's default hints cannot say KOE_VIBRATO_DEPTH_DEFAULT (50) within 0 to 1200: 100 is the nearest they
     * can. The vibrato is off until the rate moves, and an unconnected port still gets 50 (voice.c). */
    { LADSPA_HINT_BOUNDED_BELOW | LADSPA_HINT_BOUNDED_ABOVE | LADSPA_HINT_DEFAULT_100, 0, KOE_VIBRATO_DEPTH_MAX },
    /* 0 off, then 1 + koe_aim: 1 kawaii, 2 child, 3 female, 4 male, 5 deep, 6 giant. */
    { LADSPA_HINT_BOUNDED_BELOW | LADSPA_HINT_BOUNDED_ABOVE | LADSPA_HINT_INTEGER | LADSPA_HINT_DEFAULT_0,
      0, KOE_AIM_PORT_MAX },
};

static const LADSPA_Descriptor descriptor = {
    /* Not an ID reserved from ladspa.org: hosts here find the plugin by file and label, as the header advises. */
    .UniqueID = 0x4b6f65,
    .Label = "koe_voice",
    .Properties = LADSPA_PROPERTY_HARD_RT_CAPABLE, /* run() neither allocates nor locks (Tests/Plugins) */
    .Name = "koe voice changer (pitch, formant, snap, vibrato)",
    .Maker = "koe",
    .Copyright = "GPL-3.0-or-later",
    .PortCount = PORT_COUNT,
    .PortDescriptors = port_descriptors,
    .PortNames = port_names,
    .PortRangeHints = port_hints,
    .instantiate = instantiate,
    .connect_port = connect_port,
    .activate = activate,
    .run = run,
    .cleanup = cleanup,
};

const LADSPA_Descriptor *ladspa_descriptor(unsigned long index) {
    return index == 0 ? &descriptor : NULL;
}
