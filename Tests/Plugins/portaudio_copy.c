/* The live test's anchor: a PortAudio client that copies its input to its output, its stream opened as `koe live`
 * opens its own (full duplex, mono float, callback mode, the devices' low latencies, frames per buffer left to
 * the host). What it adds end to end is the devices' round trip alone.
 *
 *   portaudio_copy DEVICE    runs until SIGINT or SIGTERM, then exits 0 */
#include <portaudio.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static volatile sig_atomic_t stopping;

static void stop(int signal_number) { (void)signal_number; stopping = 1; }

static int copy(const void *input, void *output, unsigned long frames, const PaStreamCallbackTimeInfo *time,
                PaStreamCallbackFlags flags, void *data) {
    (void)time; (void)flags; (void)data;
    memcpy(output, input, frames * sizeof(float));
    return paContinue;
}

int main(int argc, char **argv) {
    if (argc != 2 || Pa_Initialize() != paNoError) {
        fprintf(stderr, "usage: portaudio_copy DEVICE (and a working PortAudio)\n");
        return 2;
    }
    PaDeviceIndex device = paNoDevice;
    for (PaDeviceIndex index = 0; index < Pa_GetDeviceCount(); ++index) {
        if (strcmp(Pa_GetDeviceInfo(index)->name, argv[1]) == 0) device = index;
    }
    if (device == paNoDevice) {
        fprintf(stderr, "portaudio_copy: no device '%s'\n", argv[1]);
        Pa_Terminate();
        return 1;
    }
    const PaDeviceInfo *info = Pa_GetDeviceInfo(device);
    PaStreamParameters in = {device, 1, paFloat32, info->defaultLowInputLatency, NULL};
    PaStreamParameters out = {device, 1, paFloat32, info->defaultLowOutputLatency, NULL};
    PaStream *stream;
    signal(SIGINT, stop);
    signal(SIGTERM, stop);
    if (Pa_OpenStream(&stream, &in, &out, info->defaultSampleRate, paFramesPerBufferUnspecified, paNoFlag, copy, NULL)
            != paNoError || Pa_StartStream(stream) != paNoError) {
        fprintf(stderr, "portaudio_copy: cannot open and start '%s'\n", argv[1]);
        Pa_Terminate();
        return 1;
    }
    while (!stopping) usleep(10000);
    Pa_StopStream(stream);
    Pa_CloseStream(stream);
    Pa_Terminate();
    return 0;
}
