/* koe as an LV2 plugin, urn:koe:voice (ports in koe.ttl). Requires no host feature. */
#include <stdlib.h>

#include <lv2/core/lv2.h>

#include "../voice.h"

enum { PORT_INPUT, PORT_OUTPUT, PORT_PITCH, PORT_FORMANT, PORT_GAIN_DB, PORT_LATENCY, KOE_LATER_PORTS };

KOE_PORT_CONTROL_TABLE;

typedef struct {
    koe_voice voice;
    const float *input;
    float *output;
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
    case PORT_LATENCY: plugin->latency = data; break;
    default:
        if (port < PORT_COUNT) koe_voice_connect(&plugin->voice, port_controls[port], data);
    }
}

static void activate(LV2_Handle instance) {
    koe_voice_reset(&((Plugin *)instance)->voice);
}

static void run(LV2_Handle instance, uint32_t frames) {
    Plugin *plugin = instance;
    if (plugin->latency) *plugin->latency = koe_voice_latency(&plugin->voice);
    if (!plugin->input || !plugin->output) return;
    koe_voice_run(&plugin->voice, plugin->input, plugin->output, frames);
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
