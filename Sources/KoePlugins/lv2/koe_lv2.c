/* koe as an LV2 plugin, urn:koe:voice (ports in koe.ttl). Requires no host feature. */
#include <lv2/core/lv2.h>

#include "../voice.h"

enum { PORT_INPUT, PORT_OUTPUT, PORT_PITCH, PORT_FORMANT, PORT_GAIN_DB, PORT_LATENCY, KOE_LATER_PORTS };

KOE_PORT_CONTROL_TABLE;

static LV2_Handle instantiate(const LV2_Descriptor *descriptor, double rate, const char *bundle_path,
                              const LV2_Feature *const *features) {
    (void)descriptor; (void)bundle_path; (void)features;
    return koe_voice_create(rate);
}

static void connect_port(LV2_Handle instance, uint32_t port, void *data) {
    if (port < PORT_COUNT) koe_voice_connect(instance, port_controls[port], data);
}

static void activate(LV2_Handle instance) {
    koe_voice_reset(instance);
}

static void run(LV2_Handle instance, uint32_t frames) {
    koe_voice_run(instance, frames);
}

static void cleanup(LV2_Handle instance) {
    koe_voice_destroy(instance);
}

static const LV2_Descriptor descriptor = {
    "urn:koe:voice", instantiate, connect_port, activate, run, NULL, cleanup, NULL,
};

LV2_SYMBOL_EXPORT const LV2_Descriptor *lv2_descriptor(uint32_t index) {
    return index == 0 ? &descriptor : NULL;
}
