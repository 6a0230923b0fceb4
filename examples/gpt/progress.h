// A one-line live progress bar: step, loss, tokens/s, elapsed / ETA, peak
// memory. Redrawn in place on a terminal; one line per tenth otherwise.
#pragma once

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <string>

namespace gpt {

class Progress {
 public:
  explicit Progress(int total) : total_(total), tty_(isatty(STDOUT_FILENO)), start_(clock::now()) {}

  void update(int step, double loss, double tokens_per_s, size_t peak_bytes) {
    double elapsed = seconds();
    double eta = step > 0 ? elapsed / step * (total_ - step) : 0;
    int width = 24, filled = total_ > 0 ? width * step / total_ : width;
    std::string bar(filled, '=');
    if (filled < width) bar += '>' + std::string(width - filled - 1, ' ');
    char line[200];
    std::snprintf(line, sizeof line, "step %5d/%d [%s] loss %.3f | %.1fK tok/s | %s / ETA %s | peak %zu MiB",
                  step, total_, bar.c_str(), loss, tokens_per_s / 1000, clock_text(elapsed).c_str(),
                  clock_text(eta).c_str(), peak_bytes >> 20);
    if (tty_) {
      std::printf("\r%s\033[K", line);
      if (step == total_) std::printf("\n");
      std::fflush(stdout);
    } else if (step == total_ || step * 10 / total_ != last_tenth_) {
      last_tenth_ = step * 10 / total_;
      std::printf("%s\n", line);
      std::fflush(stdout);
    }
  }
  double seconds() const { return std::chrono::duration<double>(clock::now() - start_).count(); }

 private:
  using clock = std::chrono::steady_clock;
  static std::string clock_text(double s) {
    char b[32];
    int t = static_cast<int>(s + 0.5);
    std::snprintf(b, sizeof b, "%02d:%02d", t / 60, t % 60);
    return b;
  }
  int total_;
  bool tty_;
  int last_tenth_ = -1;
  clock::time_point start_;
};

}  // namespace gpt
