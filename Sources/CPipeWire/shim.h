/* libpipewire-0.3 (Debian libpipewire-0.3-dev) for CKoePipeWire, which does the stream work in C: PipeWire's API
 * is mostly macros and inline functions. Swift only sees CKoePipeWire's plain functions. */
#include <pipewire/pipewire.h>
