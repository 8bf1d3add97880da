// WORLD's C++ doing what `koe convert IN OUT --pitch 1.2 --formant 1.1 --threads 1 [--f0-method harvest]` does,
// as one process from file to file: bench.py's anchor for issue 38's bars. Built by bench.py against WORLD's
// src/*.cpp from pyworld's sdist (WORLD's own WAV reader, tools/audioio.cpp, is not among them).
//
// Usage: world_convert IN.wav OUT.wav dio|harvest
//
// WORLD's defaults throughout (5 ms frames, F0 from 71 to 800 Hz, CheapTrick's FFT size for 71 Hz, D4C's
// threshold 0.85); F0 times 1.2; each envelope row read at bin / 1.1 by linear interpolation, held at the last
// bin, as bench.py's pyworld path and koe do.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

#include "world/cheaptrick.h"
#include "world/d4c.h"
#include "world/dio.h"
#include "world/harvest.h"
#include "world/stonemask.h"
#include "world/synthesis.h"

namespace {

const double kPitch = 1.2;
const double kFormant = 1.1;

uint32_t Little32(const unsigned char *bytes) {
  return bytes[0] | bytes[1] << 8 | bytes[2] << 16 | static_cast<uint32_t>(bytes[3]) << 24;
}

// A 16-bit PCM mono WAV's samples as doubles in [-1, 1), and its rate; false on anything else.
bool ReadWav(const char *path, std::vector<double> *samples, int *fs) {
  FILE *file = fopen(path, "rb");
  if (file == nullptr) return false;
  std::vector<unsigned char> bytes;
  unsigned char buffer[65536];
  for (size_t count; (count = fread(buffer, 1, sizeof buffer, file)) > 0;)
    bytes.insert(bytes.end(), buffer, buffer + count);
  fclose(file);
  if (bytes.size() < 12 || memcmp(&bytes[0], "RIFF", 4) != 0 || memcmp(&bytes[8], "WAVE", 4) != 0) return false;
  bool format_ok = false;
  // Chunks follow one another, each padded to an even length.
  for (size_t at = 12; at + 8 <= bytes.size();) {
    size_t size = Little32(&bytes[at + 4]);
    const unsigned char *body = &bytes[at + 8];
    size_t available = std::min(size, bytes.size() - at - 8);
    if (memcmp(&bytes[at], "fmt ", 4) == 0 && available >= 16) {
      int format = body[0] | body[1] << 8, channels = body[2] | body[3] << 8, bits = body[14] | body[15] << 8;
      *fs = static_cast<int>(Little32(body + 4));
      format_ok = (format == 1 || format == 0xFFFE) && channels == 1 && bits == 16;
    } else if (memcmp(&bytes[at], "data", 4) == 0 && format_ok) {
      samples->resize(available / 2);
      for (size_t i = 0; i < samples->size(); ++i)
        (*samples)[i] = static_cast<int16_t>(body[2 * i] | body[2 * i + 1] << 8) / 32768.0;
      return true;
    }
    at += 8 + size + (size & 1);
  }
  return false;
}

bool WriteWav(const char *path, const double *samples, int length, int fs) {
  std::vector<unsigned char> bytes(44 + 2 * static_cast<size_t>(length));
  auto put32 = [&](size_t at, uint32_t value) {
    for (int i = 0; i < 4; ++i) bytes[at + i] = static_cast<unsigned char>(value >> (8 * i));
  };
  memcpy(&bytes[0], "RIFF", 4);
  put32(4, static_cast<uint32_t>(bytes.size() - 8));
  memcpy(&bytes[8], "WAVEfmt ", 8);
  put32(16, 16);
  put32(20, 1 | 1 << 16);  // PCM, one channel
  put32(24, fs);
  put32(28, fs * 2);
  put32(32, 2 | 16 << 16);  // block align, bits per sample
  memcpy(&bytes[36], "data", 4);
  put32(40, 2 * length);
  for (int i = 0; i < length; ++i) {
    long value = std::lround(std::max(-1.0, std::min(1.0, samples[i])) * 32767.0);
    bytes[44 + 2 * i] = static_cast<unsigned char>(value);
    bytes[45 + 2 * i] = static_cast<unsigned char>(value >> 8);
  }
  FILE *file = fopen(path, "wb");
  if (file == nullptr) return false;
  bool written = fwrite(bytes.data(), 1, bytes.size(), file) == bytes.size();
  return fclose(file) == 0 && written;
}

// One envelope row read at bin / ratio by linear interpolation, held at the last bin (bench.py's formant_warp).
void WarpRow(const double *row, int bins, double ratio, double *warped) {
  for (int bin = 0; bin < bins; ++bin) {
    double source = std::min(bin / ratio, bins - 1.0);
    int index = std::min(static_cast<int>(source), bins - 2);
    double fraction = source - index;
    warped[bin] = row[index] + fraction * (row[index + 1] - row[index]);
  }
}

}  // namespace

int main(int argc, char **argv) {
  if (argc != 4 || (strcmp(argv[3], "dio") != 0 && strcmp(argv[3], "harvest") != 0)) {
    fprintf(stderr, "usage: %s IN.wav OUT.wav dio|harvest\n", argv[0]);
    return 2;
  }
  std::vector<double> x;
  int fs = 0;
  if (!ReadWav(argv[1], &x, &fs)) {
    fprintf(stderr, "%s: not a 16-bit mono PCM WAV\n", argv[1]);
    return 1;
  }
  int x_length = static_cast<int>(x.size());
  const double frame_period = 5.0;

  int f0_length;
  std::vector<double> f0, temporal_positions;
  if (strcmp(argv[3], "dio") == 0) {
    DioOption option;
    InitializeDioOption(&option);
    f0_length = GetSamplesForDIO(fs, x_length, frame_period);
    std::vector<double> raw_f0(f0_length);
    f0.resize(f0_length);
    temporal_positions.resize(f0_length);
    Dio(x.data(), x_length, fs, &option, temporal_positions.data(), raw_f0.data());
    StoneMask(x.data(), x_length, fs, temporal_positions.data(), raw_f0.data(), f0_length, f0.data());
  } else {
    HarvestOption option;
    InitializeHarvestOption(&option);
    f0_length = GetSamplesForHarvest(fs, x_length, frame_period);
    f0.resize(f0_length);
    temporal_positions.resize(f0_length);
    Harvest(x.data(), x_length, fs, &option, temporal_positions.data(), f0.data());
  }

  CheapTrickOption cheaptrick_option;
  InitializeCheapTrickOption(fs, &cheaptrick_option);
  int fft_size = cheaptrick_option.fft_size, bins = fft_size / 2 + 1;
  // Rows of one block each, as WORLD's functions take them: an array of row pointers.
  std::vector<double> spectrogram_data(static_cast<size_t>(f0_length) * bins);
  std::vector<double> aperiodicity_data(spectrogram_data.size());
  std::vector<double *> spectrogram(f0_length), aperiodicity(f0_length);
  for (int i = 0; i < f0_length; ++i) {
    spectrogram[i] = &spectrogram_data[static_cast<size_t>(i) * bins];
    aperiodicity[i] = &aperiodicity_data[static_cast<size_t>(i) * bins];
  }
  CheapTrick(x.data(), x_length, fs, temporal_positions.data(), f0.data(), f0_length, &cheaptrick_option,
             spectrogram.data());
  D4COption d4c_option;
  InitializeD4COption(&d4c_option);
  D4C(x.data(), x_length, fs, temporal_positions.data(), f0.data(), f0_length, fft_size, &d4c_option,
      aperiodicity.data());

  for (double &value : f0) value *= kPitch;
  std::vector<double> row(bins);
  for (int i = 0; i < f0_length; ++i) {
    std::copy(spectrogram[i], spectrogram[i] + bins, row.begin());
    WarpRow(row.data(), bins, kFormant, spectrogram[i]);
  }

  // pyworld.synthesize's length; the file keeps the input's, as koe's does.
  int y_length = static_cast<int>(f0_length * frame_period * fs / 1000);
  std::vector<double> y(y_length);
  Synthesis(f0.data(), f0_length, spectrogram.data(), aperiodicity.data(), fft_size, frame_period, fs, y_length,
            y.data());
  if (!WriteWav(argv[2], y.data(), std::min(x_length, y_length), fs)) {
    fprintf(stderr, "%s: cannot write\n", argv[2]);
    return 1;
  }
  return 0;
}
