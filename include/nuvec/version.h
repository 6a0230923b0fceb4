// nuvec's version: the one definition (CMakeLists.txt reads the package
// version from this file, so find_package(nuvec VERSION ...) agrees).
#pragma once

#define NUVEC_VERSION_MAJOR 0
#define NUVEC_VERSION_MINOR 2
#define NUVEC_VERSION_PATCH 0

namespace nuvec {

/// "major.minor.patch".
constexpr const char* version() { return "0.2.0"; }
inline constexpr int version_major = NUVEC_VERSION_MAJOR;
inline constexpr int version_minor = NUVEC_VERSION_MINOR;
inline constexpr int version_patch = NUVEC_VERSION_PATCH;

}  // namespace nuvec
