/* koe as an LV2 plugin, urn:koe:voice (ports in koe.ttl). Requires no host feature. */
#include <stdlib.h>

#include <lv2/core/lv2.h>

#include "../voice.h"

enum {
    PORT_INPUT, PORT_OUTPUT, PORT_PITCH, PORT_FORMANT, PORT_GAIN_DB, PORT_LATENCY, PORT_PITCH_RANGE, PORT_WHISPER,
    PORT_SNAP, PORT_SNAP_KEY, PORT_SNAP_STRENGTH, PORT_SNAP_SPEED, PORT_VIBRATO_RATE, PORT_VIBRATO_DEPTH
};

typedef struct {
    koe_voice voice;
    const float *input;
    float *output;
    koe_voice_ports controls;
    float *latency;
} Plugin;

static LV2_Handle instantiate(const LV2_Descriptor *descriptor, double rate, const char *bundle_path,
                              const LV2_Feature *const *features) {
    (void)descriptor; (void)bundle_path; (void)features;
    Plugin *plugin = calloc(1, sizeof *plugin);
    if (!plugin) return NULL;
    if (koe_voice_open(&plugin->voice, rate) != KOE_OK) {
        free(plugin);
        return NULL;
    }
    return plugin;
}

static void connect_port(LV2_Handle instance, uint32_t port, void *data) {
    Plugin *plugin = instance;
    switch (port) {
    case PORT_INPUT: plugin->input = data; break;
    case PORT_OUTPUT: plugin->output = data; break;
    case PORT_PITCH: plugin->controls.pitch = data; break;
    case PORT_FORMANT: plugin->controls.formant = data; break;
    case PORT_GAIN_DB: plugin->controls.gain_db = data; break;
    case PORT_LATENCY: plugin->latency = data; break;
    case PORT_PITCH_RANGE: plugin->controls.pitch_range = data; break;
    case PORT_WHISPER: plugin->controls.whisper = data; break;
    case PORT_SNAP: plugin->controls.snap = data; break;
    case PORT_SNAP_KEY: plugin->controls.snap_key = data; break;
    case PORT_SNAP_STRENGTH: plugin->controls.snap_strength = data; break;
    case PORT_SNAP_SPEED: plugin->controls.snap_speed = data; break;
    case PORT_VIBRATO_RATE: plugin->controls.vibrato_rate = data; break;
    case PORT_VIBRATO_DEPTH: plugin->controls.vibrato_depth = data; break;
    }
}

static void activate(LV2_Handle instance) {
    koe_voice_reset(&((Plugin *)instance)->voice);
}

static void run(LV2_Handle instance, uint32_t frames) {
    Plugin *plugin = instance;
    if (plugin->latency) *plugin->latency = koe_voice_latency(&plugin->voice);
    if (!plugin->input || !plugin->output) return;
    koe_voice_run(&plugin->voice, plugin->input, plugin->output, frames, &plugin->controls);
}

static void cleanup(LV2_Handle instance) {
    Plugin *plugin = instance;
    koe_voice_close(&plugin->voice);
    free(plugin);
}

static const LV2_Descriptor descriptor = {
    "urn:koe:voice", instantiate, connect_port, activate, run, NULL, cleanup, NULL,
};

LV2_SYMBOL_EXPORT const LV2_Descriptor *lv2_descriptor(uint32_t index) {
    return index == 0 ? &descriptor : NULL;
}
