#include "corpus.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace gpt {

Corpus load_fortunes(const std::string& dir) {
  namespace fs = std::filesystem;
  std::vector<fs::path> files;
  std::error_code ec;
  for (auto& e : fs::directory_iterator(dir, ec))
    if (e.is_regular_file() && !e.path().has_extension()) files.push_back(e.path());
  std::sort(files.begin(), files.end());
  std::string text;
  for (auto& f : files) {
    std::ifstream in(f);
    std::string line;
    while (std::getline(in, line)) {
      if (line == "%") {
        text += '\n';
        continue;
      }
      for (char ch : line)
        if (ch == '\t') text += ' ';
        else if (ch >= 32 && ch < 127) text += ch;
      text += '\n';
    }
  }
  if (text.size() < 10000)
    throw std::runtime_error("no text under " + dir + ": install Debian's `fortunes` package");
  Corpus c;
  c.source = dir + " (" + std::to_string(files.size()) + " files, " + std::to_string(text.size()) + " characters)";
  std::array<bool, 128> seen{};
  for (char ch : text) seen[static_cast<unsigned char>(ch)] = true;
  for (int i = 0; i < 128; ++i)
    if (seen[i]) c.chars += static_cast<char>(i);
  std::vector<int32_t> ids = encode(c, text);
  size_t cut = ids.size() * 9 / 10;
  c.train.assign(ids.begin(), ids.begin() + cut);
  c.heldout.assign(ids.begin() + cut, ids.end());
  std::vector<double> count(c.chars.size(), 0.0);
  for (int32_t t : c.train) count[t] += 1;
  for (double n : count)
    if (n > 0) c.unigram_entropy -= n / c.train.size() * std::log(n / c.train.size());
  return c;
}

std::string decode(const Corpus& c, const std::vector<int32_t>& ids) {
  std::string s;
  for (int32_t i : ids) s += c.chars.at(i);
  return s;
}

std::vector<int32_t> encode(const Corpus& c, const std::string& text) {
  std::array<int32_t, 128> index;
  index.fill(-1);
  for (size_t i = 0; i < c.chars.size(); ++i) index[static_cast<unsigned char>(c.chars[i])] = int32_t(i);
  std::vector<int32_t> out;
  for (char ch : text) {
    unsigned char u = static_cast<unsigned char>(ch);
    if (u < 128 && index[u] >= 0) out.push_back(index[u]);
  }
  return out;
}

}  // namespace gpt
